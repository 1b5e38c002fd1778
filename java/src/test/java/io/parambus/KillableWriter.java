package io.parambus;

import java.util.Arrays;

/**
 * A Java writer in a JVM of its own, for CrossLanguageTest's SIGKILL test: it writes
 * j_double and j_array of an instance of tests/java/fixtures/xlang.pbs (one thread, each
 * value the version it produces) and j_big (two more threads at once, each filling the
 * array with a counter of its own, so that the parameter's word is nearly always held by
 * one of them and the other sleeps on it), and prints "writing" once every thread has
 * written, until it is killed.
 *
 * <p>Usage: {@code java -cp CLASSES io.parambus.KillableWriter INSTANCE}
 */
public final class KillableWriter {
    private KillableWriter() {
    }

    /**
     * Write until killed.
     *
     * @param args the instance name
     */
    public static void main(String[] args) throws InterruptedException {
        ParamTable t = ParamTable.open(args[0], ParamTable.Access.WRITE);
        int jd = t.index("j_double"), ja = t.index("j_array"), jb = t.index("j_big");
        java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(3);
        Thread.ofPlatform().start(() -> {
            long[] v = new long[16];
            for (boolean first = true;; first = false) {
                t.setDouble(jd, t.version(jd) + 1);
                Arrays.fill(v, t.version(ja) + 1);
                t.setLongArray(ja, v);
                if (first) {
                    started.countDown();
                }
            }
        });
        for (int k = 0; k < 2; k++) {
            long base = (k + 1L) << 40;
            Thread.ofPlatform().start(() -> {
                long[] v = new long[64];
                for (long n = base;; n++) {
                    Arrays.fill(v, n);
                    t.setLongArray(jb, v);
                    if (n == base) {
                        started.countDown();
                    }
                }
            });
        }
        started.await();
        System.out.println("writing");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
