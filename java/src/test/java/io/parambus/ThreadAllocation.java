package io.parambus;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * The calling thread's allocated-bytes counter ({@code com.sun.management.ThreadMXBean}),
 * for the tests that prove a path allocates nothing. Reached through public lookups: the
 * module io.parambus does not read java.management.
 */
public final class ThreadAllocation {
    private ThreadAllocation() {
    }

    private static final Object BEAN;
    private static final MethodHandle ALLOCATED;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.publicLookup();
            Class<?> factory = Class.forName("java.lang.management.ManagementFactory");
            Class<?> bean = Class.forName("java.lang.management.ThreadMXBean");
            Class<?> sunBean = Class.forName("com.sun.management.ThreadMXBean");
            BEAN = l.findStatic(factory, "getThreadMXBean", MethodType.methodType(bean)).invoke();
            ALLOCATED = l.findVirtual(sunBean, "getCurrentThreadAllocatedBytes", MethodType.methodType(long.class))
                    .asType(MethodType.methodType(long.class, Object.class));
        } catch (Throwable e) {
            throw new ExceptionInInitializerError(e);
        }
        // A method handle's first few hundred calls run through interpreted lambda forms,
        // which allocate; call it until they are compiled, so that it allocates nothing.
        for (int k = 0; k < 20_000; k++) {
            bytes();
        }
    }

    /** The bytes the calling thread has allocated so far. */
    public static long bytes() {
        try {
            return (long) ALLOCATED.invokeExact(BEAN);
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }
}
