/* SPDX-License-Identifier: MIT */
/*
 * write-internal.h: what the write protocol (write.c) offers pbusd beyond table.h.
 */
#ifndef PBUS_WRITE_INTERNAL_H
#define PBUS_WRITE_INTERNAL_H

#include <stddef.h>

#include <parambus/table.h>

/* pbus_table_write_many() that never waits for another writer: if a live
 * writer holds one of the parameters, -EAGAIN with nothing written (that
 * write's .result -EAGAIN, the others' 0); try again later. For pbusd,
 * whose one thread serves every client and must not stop for one busy
 * parameter (docs/security.md). */
int pbus_table_write_many_try(struct pbus_table *table, struct pbus_write *writes, size_t count);

#endif
