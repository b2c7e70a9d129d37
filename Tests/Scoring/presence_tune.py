#!/usr/bin/env python3
"""Dev tool: precision/recall of PersonPresenceRule thresholds on frames labelled by the clip notes in labels.csv."""
import numpy as np
d=np.load('/tmp/presence/kp.npz')
# ground truth by time at 2 fps: Wahoo title card 0-5.3/5.5 s, end cards, per labels.csv notes
gt_spans={'wahoo_jumping_jacks.mp4':[(0,5.3,0),(6.3,22.7,1),(22.7,1e9,0)],
          'wahoo_lunges.mp4':[(0,5.5,0),(6.0,23.5,1),(24,1e9,0)],
          'wahoo_squats.mp4':[(0,5.5,0),(6,26,1),(26.5,1e9,0)],
          'social_burpees.mp4':[(0.5,5.8,1)], 'stock_lunges1.mp4':[(1,15,1)], 'quva_other_floor_press.mp4':[(0,26,1)]}
rows=[]
for k in d.files:
    kp=d[k]
    for i,f in enumerate(kp):
        t=i/2
        lab=None
        for a,b,v in gt_spans[k]:
            if a<=t<b: lab=v
        if lab is None: continue
        rows.append((k,t,lab,f[:,2]))
print(len(rows),'labelled frames', sum(r[2] for r in rows),'with person')
def rule(s,thr,n):
    conf=(s>=thr).sum(); sh=max(s[5],s[6])>=thr; hp=max(s[11],s[12])>=thr
    return conf>=n and sh and hp
for thr in [0.2,0.25,0.3,0.35,0.4]:
    for n in [4,6,8,10]:
        tp=sum(1 for r in rows if r[2]==1 and rule(r[3],thr,n)); fp=sum(1 for r in rows if r[2]==0 and rule(r[3],thr,n))
        fn=sum(1 for r in rows if r[2]==1 and not rule(r[3],thr,n)); tn=sum(1 for r in rows if r[2]==0 and not rule(r[3],thr,n))
        print(f"thr {thr} n {n}: precision {tp/max(1,tp+fp):.3f} recall {tp/max(1,tp+fn):.3f} (tp {tp} fp {fp} fn {fn} tn {tn})")
# print no-person frames' max scores
neg=[r for r in rows if r[2]==0]
print('no-person frames top scores', sorted([round(float(np.sort(r[3])[-6]),2) for r in neg])[-10:])
print('false positives at 0.25/6:')
for r in rows:
    if r[2]==0 and rule(r[3],0.25,6): print(r[0], r[1], np.round(r[3],2))
print('scores distinct values', np.unique(np.round(np.concatenate([r[3] for r in rows]),3))[:20])
