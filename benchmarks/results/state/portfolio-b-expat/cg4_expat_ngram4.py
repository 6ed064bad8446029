# Side measurement (session 48): instructions per execution of expat's bug build under four builds on the
# same 200 inputs (B2's -S queue): PCGUARD, AFL++'s NGRAM-4 (2^16), our inline ngram-4 flat 2^16, and
# indexed (as B ran it). Inside the 5.02c root.
import json, sys
from pathlib import Path
sys.path[:0] = ["/work/main", "/work/main/benchmarks", "/work/main/benchmarks/bugs"]
import sensitive_metrics as sm
import aflfs_bench as ab
import trial_callgrind as tc
spec, env, _seeds = sm.target("expat")
afl_ng4 = str(sm.build(spec=spec, cc_kind="afl", build_vars={"AFL_LLVM_INSTRUMENT": "NGRAM-4"}, env=env))
ours_flat = sm.inline_binary(spec, env, "ngram-4")
ours_ix = sm.inline_binary(spec, env, "ngram-4", indexed=True)
pcguard = str(sm.build(spec=spec, cc_kind="afl", build_vars={}, env=env))
inputs = tc.pick_inputs(Path("/work/runs/study-expat/trials/ours/trial-2/afl-out/s1/queue"), 200)
work = Path("/tmp/cg4"); out = {}
b_env = json.load(open("/work/runs/study-expat/trials/ours/trial-2/trial.json"))["spec"]["members"][1]["env"]
for name, binary, e in [("pcguard", pcguard, {}), ("aflpp-ngram4-map16", afl_ng4, {}),
                        ("ours-ngram4-in16", ours_flat, sm.inline_env("ngram-4", 16)),
                        ("ours-ngram4-ix16", ours_ix, sm.indexed_env("ngram-4", index_pow2=21, dense_pow2=16)),
                        ("ours-ngram4-B", ours_ix, b_env)]:
    out[name] = tc.measure(binary, e, inputs, work, name)
    print(name, binary, round(out[name]["per_exec"]), flush=True)
json.dump(out, open(work / "cg4.json", "w"), indent=1)
