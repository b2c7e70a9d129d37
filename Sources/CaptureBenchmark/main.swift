print("capture benchmark")
