package io.parambus.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every Java fuzz target in one, for fuzzing: Jazzer fuzzes one target per JVM, and a
 * JVM with its agent costs seconds to start, so tests/fuzz/run fuzzes this one and the
 * input's first byte chooses the target ({@link #TARGETS}, modulo their number), the rest
 * is that target's input. Each target is its own test class, whose seeds run as
 * regression tests in every test run; here they (those of its {@code seeds()} and of its
 * Inputs directory) are the corpus's seeds, behind their selector byte. The system property {@code pbus.fuzz.targets} (a comma-separated list
 * of names; default all) leaves the others out: their inputs return at once.
 *
 * <p>A finding is the target's: its selector byte names it (tests/fuzz/run says which).
 * Threads: the targets are run one at a time, by Jazzer's thread.
 */
class DecodersFuzzTest {
    /** Name, test class, fuzz method: the selector byte's meaning, in order (do not reorder: corpora depend on it). */
    static final String[][] TARGETS = {
        {"segment", "io.parambus.SegmentFuzzTest", "openAndRead"},
        {"wire", "io.parambus.client.WireFuzzTest", "decodeFrame"},
        {"client", "io.parambus.client.ClientFuzzTest", "hostileServer"},
        {"schema", "io.parambus.client.SchemaFuzzTest", "parse"},
        {"text", "io.parambus.client.ValueTextFuzzTest", "parseAndFormat"},
        {"proc", "io.parambus.internal.ProcFuzzTest", "statLine"},
        {"gpio-events", "io.parambus.hw.GpioEventsFuzzTest", "hostileRecords"},
    };

    private static final Object[] INSTANCES = new Object[TARGETS.length];
    private static final Method[] METHODS = new Method[TARGETS.length];
    private static final Set<String> ENABLED = Set.of(System.getProperty("pbus.fuzz.targets",
            String.join(",", Arrays.stream(TARGETS).map(t -> t[0]).toList())).split(","));

    private static synchronized Method target(int k) throws ReflectiveOperationException {
        if (METHODS[k] == null) {
            Class<?> c = Class.forName(TARGETS[k][1]);
            Constructor<?> init = c.getDeclaredConstructor();
            init.setAccessible(true);
            INSTANCES[k] = init.newInstance();
            Method m = c.getDeclaredMethod(TARGETS[k][2], byte[].class);
            m.setAccessible(true);
            METHODS[k] = m;
        }
        return METHODS[k];
    }

    /** The targets' own seeds behind their selector byte; none when not fuzzing (they run in their classes). */
    static Stream<Arguments> seeds() throws ReflectiveOperationException {
        List<byte[]> all = new ArrayList<>();
        if (System.getenv("JAZZER_FUZZ") == null) {
            return Vectors.arguments(all);
        }
        for (int k = 0; k < TARGETS.length; k++) {
            if (!ENABLED.contains(TARGETS[k][0])) {
                continue;
            }
            Method seeds = Class.forName(TARGETS[k][1]).getDeclaredMethod("seeds");
            seeds.setAccessible(true);
            @SuppressWarnings("unchecked")
            Stream<Arguments> s = (Stream<Arguments>) seeds.invoke(null);
            List<byte[]> inputs = new ArrayList<>();
            for (Arguments a : s.toList()) {
                inputs.add((byte[]) a.get()[0]);
            }
            // And the committed seeds (edge cases, findings) of its Inputs directory.
            Class<?> c = Class.forName(TARGETS[k][1]);
            java.net.URL dir = c.getResource(c.getSimpleName() + "Inputs/" + TARGETS[k][2]);
            if (dir != null && dir.getProtocol().equals("file")) {
                try (Stream<java.nio.file.Path> files = java.nio.file.Files.list(java.nio.file.Path.of(dir.toURI()))) {
                    for (java.nio.file.Path f : files.sorted().toList()) {
                        inputs.add(java.nio.file.Files.readAllBytes(f));
                    }
                } catch (java.io.IOException | java.net.URISyntaxException e) {
                    throw new IllegalStateException("reading the seeds of " + c.getSimpleName() + ": " + e, e);
                }
            }
            for (byte[] in : inputs) {
                byte[] b = new byte[in.length + 1];
                b[0] = (byte) k;
                System.arraycopy(in, 0, b, 1, in.length);
                all.add(b);
            }
        }
        return Vectors.arguments(all);
    }

    @MethodSource("seeds")
    @FuzzTest
    @Timeout(30)
    void anyDecoder(byte[] input) throws Throwable {
        if (input.length == 0) {
            return;
        }
        int k = Byte.toUnsignedInt(input[0]) % TARGETS.length;
        if (!ENABLED.contains(TARGETS[k][0])) {
            return;
        }
        Method m = target(k);
        try {
            m.invoke(INSTANCES[k], (Object) Arrays.copyOfRange(input, 1, input.length));
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
