import Appliance

// Not PosewatchCommand.main(): that exits 64 on a bad command line, and posewatch documents 2.
PosewatchCommand.runAsMain()
