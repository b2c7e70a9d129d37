// swift-tools-version:6.0
//
// posewatch: a Raspberry Pi exercise-watching appliance.
// The targets read in the order frames flow through them:
//   capture → inference core → pose estimation → actions → outputs → appliance.
import PackageDescription

/// The directory of this manifest: the embedded classifier is assembled from a file in it.
let packageDirectory = String(#filePath.dropLast("/Package.swift".count))

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
        // MJPEG decoding (the libjpeg libv4lconvert itself uses); Debian: libjpeg-dev.
        .systemLibrary(
            name: "CLibJPEG", pkgConfig: "libjpeg",
            providers: [.apt(["libjpeg-dev"])]),
        .systemLibrary(
            name: "CLibGPIOD", pkgConfig: "libgpiod",
            providers: [.apt(["libgpiod-dev"])]),

        // MARK: C shims: only what Swift cannot import by itself
        .target(name: "CV4L2", dependencies: ["CLibV4L2", "CLibJPEG"]),
        .target(name: "CGPIOD", dependencies: ["CLibGPIOD"]),
        // memfd_create with seals and SCM_RIGHTS for journald's large-entry path.
        .target(name: "CLinuxShims"),

        .target(name: "CLinuxSystem"),
        .target(
            name: "CActionModel", exclude: ["action_classifier.tflite"],
            cSettings: [.define("POSEWATCH_CLASSIFIER_FILE",
                                to: "\"\(packageDirectory)/Sources/CActionModel/action_classifier.tflite\"")]),
        // The learned repetition-phase net, embedded the same way (training/counter/learned/install_model.py):
        // two models of one interface, averaged (an ensemble); install_model.py installs one or two.
        .target(
            name: "CRepetitionModel", exclude: ["repetition_phase_1.tflite", "repetition_phase_2.tflite"],
            cSettings: [.define("POSEWATCH_REPETITION_PHASE_FILE_1",
                                to: "\"\(packageDirectory)/Sources/CRepetitionModel/repetition_phase_1.tflite\""),
                        .define("POSEWATCH_REPETITION_PHASE_FILE_2",
                                to: "\"\(packageDirectory)/Sources/CRepetitionModel/repetition_phase_2.tflite\"")]),

        // MARK: the pipeline
        .target(name: "LinuxSystem", dependencies: ["CLinuxSystem"]),
        .target(name: "JSONFormat"),
        .target(name: "Capture", dependencies: ["LinuxSystem", "CV4L2"], exclude: ["README.md"]),
        // Optimised int8 kernels (SIMD intrinsics per ISA, chosen at run time) and the worker pool.
        .target(name: "CKernels", cSettings: [.unsafeFlags(["-O3"])], linkerSettings: [.linkedLibrary("m")]),
        .target(name: "InferenceCore", dependencies: ["LinuxSystem", "CKernels"]),
        .target(name: "PoseEstimation", dependencies: ["LinuxSystem", "InferenceCore", "Capture"]),
        .target(name: "Actions", dependencies: ["LinuxSystem", "InferenceCore", "PoseEstimation", "JSONFormat", "CActionModel", "CRepetitionModel"]),
        .target(name: "Outputs", dependencies: ["LinuxSystem", "CGPIOD", "CLinuxShims"]),
        .target(
            name: "Appliance",
            dependencies: [
                "LinuxSystem", "JSONFormat", "Capture", "InferenceCore", "PoseEstimation", "Actions", "Outputs",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        // Linked with lld, which gives code, read-only data and writable data segments of their own.
        // On aarch64, Swift 6.0 puts some constants in writable `.rodata` sections and ld.bfd (the
        // linker Debian 13's swiftlang uses there, with -z noseparate-code by default) mapped the
        // whole binary as one read-write-execute segment, which systemd's MemoryDenyWriteExecute=
        // refuses to exec where the kernel enforces it (PR_SET_MDWE: Debian 13, Raspberry Pi OS):
        // the service died with SIGSEGV before main (found by the arm64 system test). gold, the
        // default elsewhere, knows no -z separate-code; lld ships with every Swift toolchain.
        // deploy/build-deb.sh refuses a binary with such a segment.
        .executableTarget(name: "posewatch", dependencies: ["Appliance"],
                          linkerSettings: [.unsafeFlags(["-use-ld=lld"], .when(platforms: [.linux]))]),

        // MARK: benchmarks (not shipped): interposed malloc counts allocations per frame
        .target(name: "CMallocCounter"),
        .executableTarget(name: "CaptureBenchmark", dependencies: ["Capture", "LinuxSystem", "CV4L2", "CMallocCounter"]),

        // MARK: tests, one target per module
        // What several test targets share (a seeded random generator).
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "LinuxSystemTests", dependencies: ["LinuxSystem"]),
        .testTarget(name: "CaptureTests", dependencies: ["Capture", "CV4L2", "LinuxSystem"], exclude: ["Fixtures"]),
        .testTarget(name: "PoseEstimationTests", dependencies: ["PoseEstimation", "Capture", "InferenceCore", "LinuxSystem"],
                    exclude: ["Fixtures", "Scripts", "README.md"]),
        .testTarget(name: "ActionsTests", dependencies: ["TestSupport", "Actions", "JSONFormat", "InferenceCore", "PoseEstimation", "LinuxSystem"],
                    exclude: ["Fixtures"]),
        .testTarget(name: "JSONFormatTests", dependencies: ["TestSupport", "JSONFormat"]),
        .testTarget(name: "OutputsTests", dependencies: ["Outputs", "CGPIOD", "LinuxSystem"]),
        .testTarget(name: "ApplianceTests", dependencies: ["TestSupport", "Appliance", "CActionModel", "CRepetitionModel", "InferenceCore", "JSONFormat",
                                                           "PoseEstimation", "Capture", "Outputs", "LinuxSystem", "Actions"]),
        .testTarget(
            name: "InferenceCoreTests", dependencies: ["TestSupport", "InferenceCore"],
            exclude: ["Fixtures", "Scripts", "README.md"]),
    ]
)
