// swift-tools-version:6.0
//
// posewatch: a Raspberry Pi exercise-watching appliance.
// The targets read in the order frames flow through them:
//   capture → inference core → pose estimation → actions → outputs → appliance.
import PackageDescription

let package = Package(
    name: "posewatch",
    platforms: [.macOS(.v13)],  // Linux is the target; this only keeps `swift package` quiet elsewhere.
    products: [
        .executable(name: "posewatch", targets: ["posewatch"]),
    ],
    dependencies: [
        // Command-line parsing for the subcommands (run, doctor, model, bench, replay, snapshot).
        // 1.8.2 is the newest release whose manifest Swift 6.0 (Debian 13's swiftlang) can read.
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // MARK: system libraries, found through pkg-config
        .systemLibrary(
            name: "CLibV4L2", pkgConfig: "libv4l2 libv4lconvert",
            providers: [.apt(["libv4l-dev"])]),
        .systemLibrary(
            name: "CLibGPIOD", pkgConfig: "libgpiod",
            providers: [.apt(["libgpiod-dev"])]),

        // MARK: C shims: only what Swift cannot import by itself
        .target(name: "CV4L2", dependencies: ["CLibV4L2"]),
        .target(name: "CGPIOD", dependencies: ["CLibGPIOD"]),

        // MARK: the pipeline
        .target(name: "LinuxSystem"),
        .target(name: "Capture", dependencies: ["LinuxSystem", "CV4L2"]),
        .target(name: "InferenceCore", dependencies: ["LinuxSystem"]),
        .target(name: "PoseEstimation", dependencies: ["InferenceCore", "Capture"]),
        .target(name: "Actions", dependencies: ["InferenceCore", "PoseEstimation"]),
        .target(name: "Outputs", dependencies: ["LinuxSystem", "CGPIOD"]),
        .target(
            name: "Appliance",
            dependencies: [
                "LinuxSystem", "Capture", "InferenceCore", "PoseEstimation", "Actions", "Outputs",
                "CV4L2", "CGPIOD",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        .executableTarget(name: "posewatch", dependencies: ["Appliance"]),

        // MARK: tests, one target per module
        .testTarget(name: "LinuxSystemTests", dependencies: ["LinuxSystem"]),
        .testTarget(name: "CaptureTests", dependencies: ["Capture", "CV4L2"]),
        .testTarget(name: "OutputsTests", dependencies: ["Outputs", "CGPIOD"]),
        .testTarget(name: "ApplianceTests", dependencies: ["Appliance"]),
        .testTarget(
            name: "InferenceCoreTests", dependencies: ["InferenceCore"],
            exclude: ["Fixtures", "Scripts", "README.md"]),
    ]
)
