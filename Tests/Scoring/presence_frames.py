#!/usr/bin/env python3
"""Dev tool: MoveNet keypoints (LiteRT, letterboxed) at 2 fps from dev clips, for tuning the no-person rule.
Usage: presence_frames.py CLIP.mp4 ... (writes /tmp/presence/kp.npz); then presence_tune.py."""
import os, subprocess, numpy as np, sys, json
from ai_edge_litert.interpreter import Interpreter
# ../shared beside the package root (never committed, only measured).
SHARED=os.path.join(os.path.dirname(os.path.abspath(__file__)),'..','..','..','shared')
M=os.path.join(SHARED,'models','movenet_singlepose_lightning_int8_4.tflite')
it=Interpreter(model_path=M); it.allocate_tensors()
inp=it.get_input_details()[0]['index']; out=it.get_output_details()[0]['index']
def frames(path, fps):
    probe=subprocess.run(['ffprobe','-v','error','-select_streams','v:0','-show_entries','stream=width,height','-of','csv=p=0',path],capture_output=True,text=True).stdout.strip().split(',')
    w,h=int(probe[0]),int(probe[1]); side=max(w,h)
    # letterbox to square then 192
    vf=f"fps={fps},pad={side}:{side}:({side}-iw)/2:({side}-ih)/2:black,scale=192:192"
    raw=subprocess.run(['ffmpeg','-v','error','-i',path,'-vf',vf,'-pix_fmt','rgb24','-f','rawvideo','-'],capture_output=True).stdout
    n=len(raw)//(192*192*3)
    return np.frombuffer(raw,np.uint8)[:n*192*192*3].reshape(n,192,192,3)
res={}
for name in sys.argv[1:]:
    fr=frames(os.path.join(SHARED,'data','videos',name), 2)
    outs=[]
    for f in fr:
        it.set_tensor(inp,f[None]); it.invoke(); outs.append(it.get_tensor(out)[0,0].copy())
    res[name]=np.array(outs)
os.makedirs('/tmp/presence', exist_ok=True)
np.savez('/tmp/presence/kp.npz',**res)
