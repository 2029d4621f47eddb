//! Shard planning: which input files shard `K` of `--shard K/N` reads, computed alike by every
//! shard from the same input list, and the flag's value read.

/// The shard `k` (1-based) of `n` of the input files, balanced by bytes: files are dealt largest first
/// to the shard with the fewest bytes so far (ties to the lower shard, equal sizes in input order), so
/// every shard computes the same plan from the same list without a coordinator. Returns the input
/// indices of shard `k`, in input order.
pub(crate) fn shard_plan(sizes: &[u64], n: usize) -> Vec<Vec<usize>> {
    let n = n.max(1);
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by(|&a, &b| sizes[b].cmp(&sizes[a]).then(a.cmp(&b)));
    let mut loads = vec![0u64; n];
    let mut shards = vec![Vec::new(); n];
    for i in order {
        let (k, _) = loads
            .iter()
            .enumerate()
            .min_by(|(i, a), (j, b)| a.cmp(b).then(i.cmp(j)))
            .expect("at least one shard");
        loads[k] += sizes[i];
        shards[k].push(i);
    }
    for shard in &mut shards {
        shard.sort_unstable();
    }
    shards
}

/// Reads `K/N` (1 <= K <= N).
///
/// # Errors
///
/// Anything else, as a one-line message.
pub(crate) fn parse_shard(text: &str) -> Result<(usize, usize), String> {
    let parsed = text.split_once('/').and_then(|(k, n)| {
        Some((
            k.trim().parse::<usize>().ok()?,
            n.trim().parse::<usize>().ok()?,
        ))
    });
    match parsed {
        Some((k, n)) if k >= 1 && k <= n => Ok((k, n)),
        _ => Err(format!("expected K/N with 1 <= K <= N, got '{text}'")),
    }
}
