/* SPDX-License-Identifier: MIT */
/* signals.c: see signals.h. */
#include <signal.h>
#include <sys/signalfd.h>

#include "signals.h"

int signals_stop_fd(void)
{
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	return signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
}
