import Foundation
import Testing
import Capture
import PoseEstimation
@testable import Appliance

@Suite struct CameraRotationConfigurationTests {
    @Test("camera.rotation takes the four quarter turns and camera.flip a boolean", arguments: [0, 90, 180, 270])
    func quarterTurnsAreRead(_ degrees: Int) throws {
        let configuration = try parse("[camera]\nrotation = \(degrees)\nflip = true\n")
        #expect(configuration.cameraRotation == degrees && configuration.cameraFlip)
        #expect(configuration.frameOrientation == FrameOrientation(degrees: degrees, mirrored: true))
        #expect(configuration != ApplianceConfiguration() || degrees == 0 && !configuration.cameraFlip)
    }

    @Test("The reader and the pose stage agree on the angles there are")
    func theReaderAcceptsExactlyTheOrientationsAngles() {
        for degrees in -360...720 {
            let accepted = failure("[camera]\nrotation = \(degrees)") == nil
            #expect(accepted == FrameOrientation.degreeChoices.contains(degrees), "\(degrees)")
        }
        #expect(ApplianceConfiguration().frameOrientation.isIdentity)
    }

    @Test("Any other rotation or flip is refused in one line naming the file, line and key")
    func badValuesAreRefused() {
        #expect(failure("[camera]\nrotation = 45")
            == "/etc/posewatch/posewatch.toml:2: camera.rotation: expected 0, 90, 180 or 270 (degrees clockwise), got 45")
        #expect(failure("[camera]\n\nrotation = -90")
            == "/etc/posewatch/posewatch.toml:3: camera.rotation: expected 0, 90, 180 or 270 (degrees clockwise), got -90")
        #expect(failure("[camera]\nrotation = 90.0")
            == "/etc/posewatch/posewatch.toml:2: camera.rotation: expected 0, 90, 180 or 270 (degrees clockwise), got 90.0")
        #expect(failure("[camera]\nrotation = \"90\\n<2>posewatch: boom\"")
            == "/etc/posewatch/posewatch.toml:2: camera.rotation: expected 0, 90, 180 or 270 (degrees clockwise), got \"90\\n<2>posewatch: boom\"")
        #expect(failure("[camera]\nflip = \"horizontal\"")
            == "/etc/posewatch/posewatch.toml:2: camera.flip: expected true or false, got \"horizontal\"")
    }
}
