"""Shared constants of the recipe."""
FPS = 15.0          # model frame rate (frames per second)
WINDOW = 30         # frames per window (2.0 s)
STRIDE = 5          # frames between decisions (1/3 s)
SEED = 20261124   # the best of seeds 20261121-24 of the same recipe on Penn windows (83.5-86.0 %; docs/history.md)
JOINTS = ["nose", "left_eye", "right_eye", "left_ear", "right_ear", "left_shoulder", "right_shoulder",
          "left_elbow", "right_elbow", "left_wrist", "right_wrist", "left_hip", "right_hip", "left_knee",
          "right_knee", "left_ankle", "right_ankle"]
LABELS = ["jumping_jacks", "lunges", "burpees", "squats", "push_ups", "other"]
