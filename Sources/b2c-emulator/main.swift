import B2CEmulatorCLI

await B2CEmulatorProgram.runProgram()
