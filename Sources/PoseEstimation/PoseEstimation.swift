// PoseEstimation: MoveNet pre- and post-processing on the inference core, `Pose` and its
// skeleton, no-person detection, person selection and tracking, crop-from-previous-frame.
