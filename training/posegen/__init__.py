"""posewatch synthetic motion generator: parametric 3D body -> actions -> camera -> MoveNet-like noise."""
