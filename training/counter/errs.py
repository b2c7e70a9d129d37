import sys, data, counter, numpy as np
kw = eval(sys.argv[1]) if len(sys.argv) > 1 else {}
seqs = data.load_countix()
rows = []
for s in seqs:
    c = counter.count_sequence(s.poses, s.label, config=counter.Config(**kw))
    rows.append((abs(c.session - s.count) / s.count, s.name, s.count, c.session, len(s.poses) / 15))
rows.sort(reverse=True)
tot = sum(r[0] for r in rows)
print("MAE", tot / len(rows), "median", np.median([r[0] for r in rows]))
acc = 0
for r in rows[:25]:
    acc += r[0]
    print("%.2f %-24s gt %3d pred %3d  %5.0fs  cum share %.2f" % (r[0], r[1], r[2], r[3], r[4], acc / tot))
