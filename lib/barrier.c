/* SPDX-License-Identifier: MIT */
/*
 * barrier.c: the slow side of the asymmetric handshakes
 * (docs/segment-format.md §4.7): membarrier(2)'s global expedited barrier,
 * and this process's registration for it. A registered process's writers
 * leave out the fences of their handshakes; every revoker of a bias and
 * every waiter runs the barrier instead, which acts as a full fence in
 * every running thread of every registered process.
 *
 * Threads: any; registration happens once per process (again in a forked
 * child, which is another process).
 */
#include <errno.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "barrier-internal.h"

bool pbus_asym_registered_;
static bool asym_failed;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void reset_after_fork(void)
{
	/* The child is another process: its own registration. */
	__atomic_store_n(&pbus_asym_registered_, false, __ATOMIC_RELAXED);
	__atomic_store_n(&asym_failed, false, __ATOMIC_RELAXED);
}

static void install_fork_handler(void)
{
	pthread_atfork(NULL, NULL, reset_after_fork);
}

static int membarrier(int cmd)
{
	return syscall(SYS_membarrier, cmd, 0, 0) < 0 ? -errno : 0;
}

/* Register this process so that others' barriers reach its threads; only
 * then may it take a bias (or skip its fences). Once per process. */
bool pbus_asym_register(void)
{
	if (__atomic_load_n(&pbus_asym_registered_, __ATOMIC_ACQUIRE))
		return true;
	if (__atomic_load_n(&asym_failed, __ATOMIC_RELAXED))
		return false;
	pthread_once(&fork_once, install_fork_handler);
	if (membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) < 0) {
		__atomic_store_n(&asym_failed, true, __ATOMIC_RELAXED);
		return false;
	}
	__atomic_store_n(&pbus_asym_registered_, true, __ATOMIC_RELEASE);
	return true;
}

int pbus_asym_barrier(void)
{
	int r = membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED);

	/* The slow global barrier (an RCU grace period) reaches every thread
	 * of every process, registered or not. */
	if (r < 0)
		r = membarrier(MEMBARRIER_CMD_GLOBAL);
	return r;
}
