import B2CEmulatorCLI
import Dispatch

// Before anything else: an async main starts libdispatch's event thread, which traps when it finds no descriptor left
// (`ulimit -n 4`), so the limit is checked (or raised) here, before `serve` installs its executor hook and starts NIO.
B2CEmulatorProgram.ensureDescriptors()
Task { await B2CEmulatorProgram.runProgram() }
dispatchMain()
