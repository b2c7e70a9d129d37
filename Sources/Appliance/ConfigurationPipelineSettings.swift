import Actions
import Capture
import PoseEstimation

extension ApplianceConfiguration {
    /// The action pipeline's settings from the `[classifier]` and `[pose]` tables (run and replay
    /// take the same ones, so replay measures what the appliance does).
    public var pipelineSettings: ActionPipelineSettings {
        var settings = ActionPipelineSettings()
        settings.confidenceThreshold = Float(confidenceThreshold)
        settings.confirmations = smoothing
        if keypointSmoothing {
            settings.smoothing = KeypointSmoother(minimumCutoff: Float(smoothingMinimumCutoff), beta: Float(smoothingBeta))
        }
        return settings
    }
}

extension ApplianceConfiguration {
    /// How the pose stage turns every input upright (`camera.rotation`, `camera.flip`); the
    /// reader accepts only the four quarter turns.
    public var frameOrientation: FrameOrientation {
        FrameOrientation(degrees: cameraRotation, mirrored: cameraFlip) ?? .upright
    }
}
