#ifndef B2C_EXECUTOR_HOOK_H
#define B2C_EXECUTOR_HOOK_H

#include <stdbool.h>

/// The Swift runtime's hook for jobs enqueued on the global concurrent executor: called with the job and the runtime's
/// own enqueue function. b2c_install_global_enqueue_hook sets it once, before any job has been enqueued; false when a
/// hook was already set.
typedef void (*b2c_global_enqueue_original)(void *job);
typedef void (*b2c_global_enqueue_hook)(void *job, b2c_global_enqueue_original original);

bool b2c_install_global_enqueue_hook(b2c_global_enqueue_hook hook);

/// Runs a job of the global executor as that executor's own threads do: isolated to no serial executor (the runtime's
/// generic executor). A job run with an event loop as its serial executor (what `ExecutorJob.runSynchronously(on:)`
/// with the loop does) makes every later hop to a nonisolated async function a job of its own, enqueued again.
void b2c_run_global_job(void *job);

#endif
