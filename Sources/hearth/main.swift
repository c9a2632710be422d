print("hearth")
