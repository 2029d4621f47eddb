#!/usr/bin/env python3
"""Writes the OTLP/JSON equivalents of the workflow trajectories in ../*.jsonl.

Each trajectory becomes one trace (scenario key = the file's stem) in two files, one per way multi-agent
frameworks record a transfer:

* nested.json   - GenAI semantic conventions: every agent is an `invoke_agent` span under the agent that
                  called it (scanner is the root agent; aggregator and reporter are sub-agents), the
                  handoff payload is the sub-agent span's `faultgate.handoff.payload`, and a checkpoint is
                  a tool step named after it (`confirm_with_user`, `confirmed_by` in its arguments).
* agents_sdk.json - OpenAI Agents SDK style: agents are sibling `invoke_agent` spans under a workflow root;
                  a transfer is a `transfer_to_<agent>` tool call (payload = its arguments) followed by a
                  `handoff` span (`from_agent`, `to_agent`); a checkpoint is a span carrying
                  `faultgate.checkpoint` and `faultgate.confirmed_by`.

The events come out in the trajectory's order with the same sequence numbers (the `final` line is not an
event), so `check --workflow ../spec.json` gives the reasons `conform ../spec.json ../X.jsonl` gives.
Run from anywhere: python3 examples/workflow/otlp/generate.py
"""

import hashlib
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCES = ["conforms", "skipped", "late_checkpoint", "broken_contract", "propagated", "verified", "uncontracted"]
T0 = 1783739640_000000000  # 2026-07-11T03:14:00Z
SEC = 1_000_000_000


def value(v):
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    return {"stringValue": v if isinstance(v, str) else json.dumps(v)}


def hexid(*parts, n=16):
    return hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()[:n]


class Trace:
    def __init__(self, style, name):
        self.style, self.name = style, name
        self.trace_id = hexid(style, name, n=32)
        self.spans = []

    def span(self, key, parent, name, start, end, attrs):
        span_id = hexid(self.style, self.name, key)
        self.spans.append({
            "traceId": self.trace_id,
            "spanId": span_id,
            **({"parentSpanId": parent} if parent else {}),
            "name": name,
            "kind": 1,
            "startTimeUnixNano": str(start),
            "endTimeUnixNano": str(end),
            "attributes": [{"key": k, "value": value(v)} for k, v in attrs.items()],
            "status": {"code": 1},
        })
        return span_id

    def tool(self, key, parent, start, tool, args):
        return self.span(key, parent, f"execute_tool {tool}", start, start + SEC // 2, {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
            "gen_ai.tool.call.arguments": json.dumps(args),
            "gen_ai.tool.call.result": "ok",
        })


def build(style, name, events):
    trace = Trace(style, name)
    end = T0 + (events[-1]["seq"] + 2) * SEC
    final = events[-1]
    root_attrs = {
        "faultgate.scenario": name,
        "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": "Scan the events table and report the anomalies"}]}]),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": f"Reported {final.get('rows_reported')} rows"}]}]),
    }
    agent_span = {}
    if style == "nested":
        first = events[0]["agent"]
        root = trace.span("root", None, f"invoke_agent {first}", T0, end,
                          {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": first, **root_attrs})
        agent_span[first] = root
    else:
        root = trace.span("root", None, "Agent workflow", T0, end, root_attrs)

    def agent(name, start):
        # The SDK runs each agent as a sibling span under the workflow root.
        if name not in agent_span:
            agent_span[name] = trace.span(f"agent-{name}", root, f"invoke_agent {name}", start, end,
                                          {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name})
        return agent_span[name]

    for e in events[:-1]:
        at = T0 + e["seq"] * SEC
        key = e["seq"]
        owner = agent(e["agent"], at)
        if e["event"] == "action":
            args = {k: v for k, v in e.items() if k not in ("seq", "ts", "agent", "event", "action_type")}
            trace.tool(key, owner, at, e["action_type"], args)
        elif e["event"] == "checkpoint":
            if style == "nested":
                trace.tool(key, owner, at, e["checkpoint_id"], {"confirmed_by": e["confirmed_by"]})
            else:
                trace.span(key, owner, f"guardrail {e['checkpoint_id']}", at, at + SEC // 2,
                           {"faultgate.checkpoint": e["checkpoint_id"], "faultgate.confirmed_by": e["confirmed_by"]})
        elif e["event"] == "handoff":
            to = e["to_agent"]
            if style == "nested":
                agent_span[to] = trace.span(f"agent-{to}", owner, f"invoke_agent {to}", at, end, {
                    "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": to,
                    "faultgate.handoff.payload": json.dumps(e["payload"]),
                })
            else:
                trace.tool(key, owner, at, f"transfer_to_{to}", e["payload"])
                trace.span(f"handoff-{key}", owner, "handoff", at + 1000, at + 2000,
                           {"from_agent": e["from_agent"], "to_agent": to})
                agent(to, at + 3000)
    return trace


def main():
    for style in ("nested", "agents_sdk"):
        spans = []
        for name in SOURCES:
            lines = (HERE.parent / f"{name}.jsonl").read_text().splitlines()
            spans += build(style, name, [json.loads(l) for l in lines if l.strip()]).spans
        doc = {"resourceSpans": [{
            "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "report-pipeline"}}]},
            "scopeSpans": [{"scope": {"name": "faultgate.examples.workflow"}, "spans": spans}],
        }]}
        (HERE / f"{style}.json").write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
