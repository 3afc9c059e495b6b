#include "executor_hook.h"

#include <stddef.h>
#include <stdint.h>

// Declared by the Swift runtime (include/swift/Runtime/Concurrency.h). A static Swift standard library keeps the symbol
// out of the dynamic symbol table, so it cannot be found with dlsym; it is reached here by linking.
extern b2c_global_enqueue_hook swift_task_enqueueGlobal_hook;

bool b2c_install_global_enqueue_hook(b2c_global_enqueue_hook hook) {
    b2c_global_enqueue_hook expected = NULL;
    return __atomic_compare_exchange_n(&swift_task_enqueueGlobal_hook, &expected, hook, false, __ATOMIC_SEQ_CST,
                                       __ATOMIC_SEQ_CST);
}

// The runtime's reference to a serial executor (SerialExecutorRef: an identity and an implementation word); the generic
// executor is the null reference (SerialExecutorRef::generic()).
typedef struct {
    const void *identity;
    uintptr_t implementation;
} b2c_serial_executor_ref;

// Declared by the Swift runtime with the Swift calling convention (include/swift/Runtime/Concurrency.h): runs a job on
// the current thread, isolated to the executor given. The global executor's own threads run their jobs this way.
extern __attribute__((swiftcall)) void swift_job_run(void *job, b2c_serial_executor_ref executor);

void b2c_run_global_job(void *job) {
    b2c_serial_executor_ref generic = {NULL, 0};
    swift_job_run(job, generic);
}
