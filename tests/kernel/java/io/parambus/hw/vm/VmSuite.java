package io.parambus.hw.vm;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Set;

/**
 * The Java side of the guest's test protocol (tests/kernel/ENVIRONMENT.md,
 * section 2): runs a test class's {@link Case} methods in name order, each on
 * a fresh instance, and prints {@code ok NAME} or {@code not ok NAME: REASON}
 * per case. The exit status is 1 when a case failed.
 *
 * <p>Arguments: case names to run (default: all). A case is a public instance
 * method without parameters; it fails by throwing (an {@link AssertionError}
 * from the checks below, or any exception, whose message is the reason).
 */
public final class VmSuite {
    private VmSuite() {
    }

    /** Marks a test case. */
    @Retention(RetentionPolicy.RUNTIME)
    @Target(ElementType.METHOD)
    public @interface Case {
    }

    /** Runs cls's cases (all, or those named in args) and exits. */
    public static void main(Class<?> cls, String[] args) {
        Set<String> only = Set.copyOf(Arrays.asList(args));
        List<Method> cases = new ArrayList<>();
        for (Method m : cls.getMethods()) {
            if (m.isAnnotationPresent(Case.class) && !Modifier.isStatic(m.getModifiers())
                    && m.getParameterCount() == 0 && (only.isEmpty() || only.contains(m.getName()))) {
                cases.add(m);
            }
        }
        cases.sort(Comparator.comparing(Method::getName));
        if (cases.isEmpty()) {
            System.out.println("not ok " + cls.getSimpleName() + ": no test case matched");
            System.exit(1);
        }
        int failed = 0;
        for (Method m : cases) {
            String reason = null;
            long t0 = System.nanoTime();
            try {
                Object target = cls.getDeclaredConstructor().newInstance();
                try {
                    m.invoke(target);
                } finally {
                    if (target instanceof AutoCloseable c) {
                        c.close();
                    }
                }
            } catch (InvocationTargetException e) {
                reason = describe(e.getCause());
                e.getCause().printStackTrace(System.out);
            } catch (Throwable e) {
                reason = describe(e);
                e.printStackTrace(System.out);
            }
            System.out.printf("# %s: %.1f ms%n", m.getName(), (System.nanoTime() - t0) / 1e6);
            if (reason == null) {
                System.out.println("ok " + m.getName());
            } else {
                failed++;
                System.out.println("not ok " + m.getName() + ": " + reason);
            }
        }
        System.out.flush();
        System.exit(failed == 0 ? 0 : 1);
    }

    private static String describe(Throwable e) {
        String msg = e.getMessage();
        String text = e instanceof AssertionError && msg != null ? msg
                : e.getClass().getSimpleName() + (msg != null ? ": " + msg : "");
        return text.replace('\n', ' ');
    }

    /** Fails the case with the message unless ok. */
    public static void check(boolean ok, String format, Object... args) {
        if (!ok) {
            throw new AssertionError(String.format(format, args));
        }
    }

    /** Fails the case unless actual equals expected. */
    public static void equal(long expected, long actual, String what) {
        if (expected != actual) {
            throw new AssertionError(what + ": expected " + expected + ", got " + actual);
        }
    }

    /** Fails the case unless actual equals expected. */
    public static void equal(Object expected, Object actual, String what) {
        if (!java.util.Objects.equals(expected, actual)) {
            throw new AssertionError(what + ": expected " + expected + ", got " + actual);
        }
    }
}
