#!/usr/bin/env python3
"""Run one faultgate command over a Ray cluster: one Ray task per shard, then `faultgate merge`.

    scripts/ray_run.py [--shards N] [--address ADDR] [--faultgate BIN] ... -- \\
        check traces/ --policy policy.json --band band.json --json report.json --markdown report.md

After `--` comes the command line of a single run (check, baseline or calibrate). The driver
splits it: the inputs and the flags that decide verdicts go to every shard, which runs
`faultgate <command> <inputs> <run flags> --shard K/N --partial DIR` in a Ray task; the output
flags (and the band and gate flags) go to `faultgate merge`, which the driver runs last, on its
own machine. Its outputs are byte-identical to the single run's, except for the elapsed time.

Inputs are paths every worker can read under the same name (a shared filesystem), or
object-storage URLs (`s3://bucket/prefix/`, `gs://`, `az://`, `https://`) that each worker lists
and reads itself with its own credentials (no shared mount), given as directories, files, globs
or `@LIST` (a file naming one path or URL per line). Each shard takes its share with `--shard K/N`, so
the plan needs no coordinator; the driver computes the same plan (largest files first, to the
shard with the fewest bytes) only to report it.

Failures: a task whose worker dies (or whose faultgate exits 2) is retried by Ray
(`--retries`); a shard that fails for good fails the run with its error, and nothing is
merged. Each shard writes its partial in a temporary directory on its worker and returns the
partial's bytes through Ray's object store, so only the inputs need to be shared.

Progress: one line per shard as it finishes (`shard 3/8 done: ... (5/8 done)`).
"""

from __future__ import annotations

import argparse
import glob
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Flags of check, baseline and calibrate that take a value, by long name. Those not listed
# (pass-k, per-scenario, no-judge-cache) take none.
FLAGS_WITH_VALUE = {
    "judge", "judge-url", "judge-concurrency", "judge-timeout", "judge-retries",
    "judge-max-calls", "judge-cache", "judge-checks", "judge-record", "check", "policy",
    "golden", "outcomes", "workflow", "format", "redact", "json", "markdown", "audit", "band",
    "gate", "metric", "parquet", "junit", "html", "color", "out", "labels", "split",
    "partial", "shard",
}
# Flags that go to `faultgate merge` instead of the shards: where outputs go, and the gate.
MERGE_FLAGS = {
    "json", "markdown", "audit", "band", "gate", "metric", "pass-k", "parquet", "junit",
    "html", "color", "out", "per-scenario",
}
# Flags both need: calibrate's labels (the shards score nothing, the merge needs the keys).
BOTH_FLAGS = {"labels"}
COMMANDS = {"check", "baseline", "calibrate"}


def split_command(argv: list[str]) -> tuple[str, list[str], list[str], list[str]]:
    """(command, inputs, shard flags, merge flags) of a single run's command line."""
    if not argv or argv[0] not in COMMANDS:
        raise SystemExit(f"ray_run: expected check, baseline or calibrate after --, got {argv[:1]}")
    command, rest = argv[0], argv[1:]
    inputs: list[str] = []
    shard: list[str] = []
    merge: list[str] = []
    i = 0
    while i < len(rest):
        arg = rest[i]
        if not arg.startswith("--") or arg == "--":
            inputs.append(arg)
            i += 1
            continue
        name, has_eq, _ = arg[2:].partition("=")
        if name in ("partial", "shard"):
            raise SystemExit(f"ray_run: --{name} is the driver's to set")
        group = [arg]
        if not has_eq and name in FLAGS_WITH_VALUE:
            if i + 1 >= len(rest):
                raise SystemExit(f"ray_run: --{name} needs a value")
            group.append(rest[i + 1])
            i += 1
        i += 1
        if name in BOTH_FLAGS:
            shard += group
            merge += group
        elif name in MERGE_FLAGS:
            merge += group
        else:
            shard += group
    if not inputs:
        raise SystemExit("ray_run: no inputs")
    return command, inputs, shard, merge


def expand_inputs(inputs: list[str]) -> list[str]:
    """The inputs with @LIST files replaced by the paths they name."""
    out: list[str] = []
    for arg in inputs:
        if arg.startswith("@"):
            lines = Path(arg[1:]).read_text().splitlines()
            out += [line.strip() for line in lines if line.strip() and not line.startswith("#")]
        else:
            out.append(arg)
    return out


def is_url(arg: str) -> bool:
    """Whether faultgate reads `arg` from object storage."""
    scheme, sep, _ = arg.partition("://")
    return bool(sep) and scheme.lower() in {"s3", "s3a", "gs", "az", "azure", "abfs", "abfss", "https"}


def list_files(inputs: list[str]) -> list[tuple[str, int]]:
    """Every local file behind the inputs with its size, in the order faultgate lists them. URLs
    are left to the workers, which list them themselves (the driver needs no store client)."""
    files: list[tuple[str, int]] = []
    for arg in inputs:
        if is_url(arg):
            continue
        paths = sorted(glob.glob(arg)) if not os.path.exists(arg) else [arg]
        for path in paths:
            if os.path.isdir(path):
                for root, dirs, names in os.walk(path):
                    dirs.sort()
                    for name in sorted(names):
                        full = os.path.join(root, name)
                        files.append((full, os.path.getsize(full)))
            else:
                files.append((path, os.path.getsize(path)))
    return files


def plan(sizes: list[int], n: int) -> list[list[int]]:
    """faultgate's --shard plan: largest files first, each to the shard with the fewest bytes."""
    order = sorted(range(len(sizes)), key=lambda i: (-sizes[i], i))
    loads = [0] * n
    shards: list[list[int]] = [[] for _ in range(n)]
    for i in order:
        k = min(range(n), key=lambda j: (loads[j], j))
        loads[k] += sizes[i]
        shards[k].append(i)
    return [sorted(s) for s in shards]


def human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1000
    return str(n)


def run_shard(binary: str, cwd: str, argv: list[str], k: int, n: int, threads: int) -> dict:
    """One shard, in a Ray task: runs faultgate into a temporary partial and returns its bytes."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"faultgate-shard{k}-") as tmp:
        part = os.path.join(tmp, "partial")
        cmd = [binary, *argv, "--shard", f"{k}/{n}", "--partial", part]
        env = dict(os.environ, RAYON_NUM_THREADS=str(threads))
        done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            # Raised, so Ray retries it; the last attempt's error ends the run.
            raise RuntimeError(
                f"shard {k}/{n}: faultgate exited {done.returncode}: {done.stderr.strip()}"
            )
        files = {name: Path(part, name).read_bytes() for name in sorted(os.listdir(part))}
    import socket

    return {
        "shard": k,
        "files": files,
        "seconds": time.monotonic() - started,
        "pid": os.getpid(),
        "node": socket.gethostname(),
        "line": done.stdout.strip().splitlines()[-1] if done.stdout.strip() else "",
    }


def main() -> int:
    if "--" not in sys.argv:
        print(__doc__, file=sys.stderr)
        return 2
    cut = sys.argv.index("--")
    ap = argparse.ArgumentParser(description="Run faultgate over a Ray cluster (see the module doc).")
    ap.add_argument("--address", default="auto", help="Ray cluster address (default: auto)")
    ap.add_argument("--shards", type=int, default=8, help="number of shards (default 8)")
    ap.add_argument("--faultgate", default="faultgate",
                    help="faultgate binary as workers find it (default: faultgate on PATH)")
    ap.add_argument("--merge-faultgate", default=None,
                    help="binary the driver merges with (default: --faultgate)")
    ap.add_argument("--retries", type=int, default=3, help="Ray retries per shard task (default 3)")
    ap.add_argument("--cpus-per-shard", type=float, default=1,
                    help="CPUs each shard task reserves; faultgate uses that many threads")
    ap.add_argument("--work", type=Path, default=None,
                    help="directory for the gathered partials (default: a temporary one)")
    ap.add_argument("--pip", default=None,
                    help="pip requirement installing faultgate on workers through runtime_env, "
                         "e.g. faultgate-rs==0.1.0 (then --faultgate faultgate)")
    opts = ap.parse_args(sys.argv[1:cut])
    command, inputs, shard_flags, merge_flags = split_command(sys.argv[cut + 1:])
    if opts.shards < 1:
        raise SystemExit("ray_run: --shards must be at least 1")
    inputs = expand_inputs(inputs)
    files = list_files(inputs)
    shares = plan([size for _, size in files], opts.shards)
    total = sum(size for _, size in files)
    urls = [arg for arg in inputs if is_url(arg)]
    listed_by_workers = f" and {len(urls)} URL(s) the workers list" if urls else ""
    print(f"ray_run: {command} over {len(files)} file(s), {human(total)}{listed_by_workers}, "
          f"in {opts.shards} shard(s)", flush=True)
    for k, share in enumerate(shares if not urls else [], 1):
        print(f"  shard {k}/{opts.shards}: {len(share)} file(s), "
              f"{human(sum(files[i][1] for i in share))}", flush=True)

    try:
        import ray
    except ImportError:
        print("ray_run: Ray is not installed (pip install ray)", file=sys.stderr)
        return 2

    runtime_env = {"pip": [opts.pip]} if opts.pip else None
    ray.init(address=opts.address, runtime_env=runtime_env, log_to_driver=False,
             logging_level="ERROR")
    task = ray.remote(run_shard).options(
        max_retries=opts.retries, retry_exceptions=True, num_cpus=opts.cpus_per_shard
    )
    cwd = os.getcwd()
    argv = [command, *inputs, *shard_flags]
    threads = max(1, int(opts.cpus_per_shard))
    pending = {task.remote(opts.faultgate, cwd, argv, k, opts.shards, threads): k
               for k in range(1, opts.shards + 1)}
    if opts.work is None:
        with tempfile.TemporaryDirectory(prefix="faultgate-ray-") as tmp:
            return gather_and_merge(opts, pending, Path(tmp), merge_flags)
    return gather_and_merge(opts, pending, opts.work, merge_flags)


def gather_and_merge(opts, pending: dict, work: Path, merge_flags: list[str]) -> int:
    """Waits for the shards in turn, writes their partials under `work`, then merges them."""
    import ray

    started = time.monotonic()
    parts: dict[int, Path] = {}
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        ref = ready[0]
        k = pending.pop(ref)
        try:
            result = ray.get(ref)
        except Exception as e:  # noqa: BLE001 - a shard that failed for good ends the run
            for other in pending:
                ray.cancel(other, force=True)
            print(f"ray_run: shard {k}/{opts.shards} failed: {e}", file=sys.stderr)
            return 2
        part = work / f"shard-{k:05d}"
        part.mkdir(parents=True, exist_ok=True)
        for name, data in result["files"].items():
            (part / name).write_bytes(data)
        parts[k] = part
        print(f"ray_run: shard {k}/{opts.shards} done in {result['seconds']:.1f}s on "
              f"{result['node']} pid {result['pid']}: {result['line']} "
              f"({len(parts)}/{opts.shards} done, {time.monotonic() - started:.1f}s)", flush=True)
    merge = [opts.merge_faultgate or opts.faultgate, "merge",
             *[str(parts[k]) for k in sorted(parts)], *merge_flags]
    print("ray_run: " + " ".join(shlex.quote(a) for a in merge), flush=True)
    return subprocess.run(merge).returncode


if __name__ == "__main__":
    sys.exit(main())
