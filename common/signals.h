/* SPDX-License-Identifier: MIT */
/*
 * signals.h: how a parambus daemon with a poll loop hears that it must
 * stop. Called from main() only, before any thread starts (the threads
 * inherit the blocked mask).
 */
#ifndef PBUS_COMMON_SIGNALS_H
#define PBUS_COMMON_SIGNALS_H

/*
 * Blocks SIGTERM and SIGINT (they are read from the descriptor instead),
 * ignores SIGPIPE (a peer gone shows as EPIPE) and returns a non-blocking,
 * close-on-exec signalfd of SIGTERM and SIGINT, or -1 with errno set.
 */
int signals_stop_fd(void);

#endif
