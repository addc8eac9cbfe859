raise RuntimeError("this plug-in is broken on purpose")
