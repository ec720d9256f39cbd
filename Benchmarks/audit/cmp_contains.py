import os
import json, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oracle import load_fences, parse_positions, contains, fmt_time
fences = load_fences(sys.argv[1]); good, bad = parse_positions(sys.argv[2])
orc = contains(fences, good)
eng = [json.loads(l) for l in open(sys.argv[3])]
print('positions engine', len(eng), 'oracle', len(orc), 'pairs oracle', sum(len(o[2]) for o in orc))
nd = 0
for (d, t, ids), e in zip(orc, eng):
    if (d, fmt_time(t), ids) != (e['device'], e['time'], e['fences']):
        nd += 1
        if nd <= 10: print('DIFF', d, fmt_time(t), ids, e)
print('differences', nd)
