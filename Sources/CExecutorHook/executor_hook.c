#include "executor_hook.h"

#include <stddef.h>

// Declared by the Swift runtime (include/swift/Runtime/Concurrency.h). A static Swift standard library keeps the symbol
// out of the dynamic symbol table, so it cannot be found with dlsym; it is reached here by linking.
extern b2c_global_enqueue_hook swift_task_enqueueGlobal_hook;

bool b2c_install_global_enqueue_hook(b2c_global_enqueue_hook hook) {
    b2c_global_enqueue_hook expected = NULL;
    return __atomic_compare_exchange_n(&swift_task_enqueueGlobal_hook, &expected, hook, false, __ATOMIC_SEQ_CST,
                                       __ATOMIC_SEQ_CST);
}
