/* SPDX-License-Identifier: MIT */
/*
 * java-native-layout: the offsets and constants of the native structs and
 * flags the Java binding uses through the FFM API (java/src/main/java/io/
 * parambus/internal/Native.java), as this machine's C compiler and C library
 * see them, one "NAME VALUE" a line, for NativeLayoutTest.java to compare.
 */
#include <fcntl.h>
#include <pwd.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>

int main(void)
{
	printf("statx_size %zu\n", sizeof(struct statx));
	printf("statx_uid %zu\n", offsetof(struct statx, stx_uid));
	printf("statx_mode %zu\n", offsetof(struct statx, stx_mode));
	printf("statx_file_size %zu\n", offsetof(struct statx, stx_size));
	printf("shmid_ds_size %zu\n", sizeof(struct shmid_ds));
	printf("shmid_ds_cuid %zu\n", offsetof(struct shmid_ds, shm_perm.cuid));
	printf("shmid_ds_segsz %zu\n", offsetof(struct shmid_ds, shm_segsz));
	printf("shmid_ds_cpid %zu\n", offsetof(struct shmid_ds, shm_cpid));
	printf("passwd_uid %zu\n", offsetof(struct passwd, pw_uid));
	printf("o_nofollow %d\n", O_NOFOLLOW);
	printf("o_cloexec %d\n", O_CLOEXEC);
	printf("o_nonblock %d\n", O_NONBLOCK);
	printf("o_rdwr %d\n", O_RDWR);
	printf("sys_futex %ld\n", (long)SYS_futex);
	printf("sys_membarrier %ld\n", (long)SYS_membarrier);
	printf("ipc_stat %d\n", IPC_STAT);
	printf("map_shared %d\n", MAP_SHARED);
	return 0;
}
