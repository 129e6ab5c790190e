# conf_batches.awk - groups conformance models into batches of at most `max` (-v max=N).
# Input: lines "test name<TAB>C name". Output: "batch<TAB>test name<TAB>C name".
# Greedy: each model goes to the first batch with room and no name that is a prefix of its
# own followed by "_" (or the other way round), because generated symbols are NAME_...,
# so the models of one batch can share one program without clashing.
{
    c = $2
    np = 0
    for (i = 2; i <= length(c); i++)
        if (substr(c, i, 1) == "_") pre[++np] = substr(c, 1, i - 1)
    for (b = 0; ; b++) {
        if (size[b] >= max) continue
        if ((b, c) in prefix) continue
        bad = 0
        for (k = 1; k <= np; k++) if ((b, pre[k]) in member) { bad = 1; break }
        if (!bad) break
    }
    size[b]++
    member[b, c] = 1
    for (k = 1; k <= np; k++) prefix[b, pre[k]] = 1
    print b "\t" $1 "\t" c
}
