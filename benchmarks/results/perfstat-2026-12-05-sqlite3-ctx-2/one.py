# One campaign of the plan's amendment of 2026-12-05 19:18: NAME BINARY SECONDS OUT [VAR=V ...]
import json, sys
sys.path[:0] = ['/work/main', '/work/main/benchmarks', '/work/main/benchmarks/bugs']
from pathlib import Path
import sensitive_metrics as sm
name, binary, seconds, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
env = dict(a.split('=', 1) for a in sys.argv[5:])
side = 'indexed' if env.get('AUTOTUNE_LAYOUT') == 'twolevel' else 'inline'
_, _, seeds = sm.target('sqlite3')
v = sm.Variant(name, side, 'ctx-2', 16, 65536, binary, env)
res = sm.campaign(v, seeds, out, seconds, 11)
(out / 'result.json').write_text(json.dumps(res, indent=1))
print(json.dumps(res))
