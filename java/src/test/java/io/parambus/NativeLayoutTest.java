package io.parambus;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.parambus.internal.Clock;
import io.parambus.internal.Native;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The struct offsets, flags and system-call numbers that Native.java hard-codes are the
 * ones this machine's C compiler and C library use (tests/java/c/native-layout.c), and
 * System.nanoTime() is CLOCK_MONOTONIC, the clock of the wake segment's deadlines.
 */
class NativeLayoutTest {
    @Test
    void nativeConstantsAreTheCCompilers() {
        assertNull(Native.unsupportedReason());
        Daemon.Result r = Daemon.runProcess(new ProcessBuilder(
                TestSupport.program("tests/java/java-native-layout").toString()));
        assertEquals(0, r.status(), r.err());
        Map<String, Long> c = new HashMap<>();
        for (String line : r.out().split("\n")) {
            String[] f = line.split(" ");
            c.put(f[0], Long.parseLong(f[1]));
        }
        Map<String, Long> java = new HashMap<>();
        java.put("statx_size", Native.STATX_SIZE);
        java.put("statx_uid", Native.STATX_UID);
        java.put("statx_mode", Native.STATX_MODE);
        java.put("statx_file_size", Native.STATX_FILE_SIZE);
        java.put("shmid_ds_size", Native.SHMID_DS_SIZE);
        java.put("shmid_ds_cuid", Native.SHMID_DS_CUID);
        java.put("shmid_ds_segsz", Native.SHMID_DS_SEGSZ);
        java.put("shmid_ds_cpid", Native.SHMID_DS_CPID);
        java.put("passwd_uid", Native.PASSWD_UID);
        java.put("o_nofollow", (long) Native.ARCH.oNoFollow());
        java.put("o_cloexec", (long) Native.O_CLOEXEC);
        java.put("o_nonblock", (long) Native.O_NONBLOCK);
        java.put("o_rdwr", (long) Native.O_RDWR);
        java.put("sys_futex", Native.ARCH.sysFutex());
        java.put("sys_membarrier", Native.ARCH.sysMembarrier());
        java.put("ipc_stat", (long) Native.IPC_STAT);
        java.put("map_shared", (long) Native.MAP_SHARED);
        assertEquals(c, java);
    }

    @Test
    void nanoTimeIsClockMonotonic() {
        assertTrue(Clock.nanoTimeIsMonotonic());
        long a = Clock.monotonicNs(), b = Clock.monotonicNs();
        assertTrue(b >= a);
    }

    @Test
    void threadTokensNameTheirThreads() throws Exception {
        long mine = WriterThread.current("test", "token").token;
        assertEquals(mine, WriterThread.current("test", "token").token);
        assertTrue(WriterThread.alive(mine));
        long[] other = new long[1];
        Thread t = Thread.ofPlatform().start(() -> other[0] = WriterThread.current("test", "token").token);
        t.join();
        assertTrue(other[0] != mine && other[0] != 0);
        // Its thread has ended: the token names a dead thread now.
        long end = System.nanoTime() + 5_000_000_000L;
        while (WriterThread.alive(other[0]) && System.nanoTime() < end) {
            Thread.onSpinWait();
        }
        assertTrue(!WriterThread.alive(other[0]));
        assertEquals(List.of(false, false), List.of(WriterThread.alive(Installed.TOKEN_GONE),
                WriterThread.alive(Installed.TOKEN_RECYCLED)));
    }
}
