import Appliance

PosewatchCommand.main()
