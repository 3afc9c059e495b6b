import B2CCLI
import B2CKit
import Dispatch

// Before anything else: an async main starts libdispatch's event thread, which traps when it finds no descriptor left
// (`ulimit -n 4`), so the limit is checked (or raised) here, and the commands run as a task afterwards.
DescriptorLimit.ensure(program: "b2c")
ClientProcess.prepare()
Task { await B2CCommand.run() }
dispatchMain()
