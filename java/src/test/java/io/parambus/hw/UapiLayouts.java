package io.parambus.hw;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.parambus.TestSupport;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * The system uAPI headers' view of a section (tests/java/c/uapi-layout.c), for the
 * *LayoutTest classes to compare with what the Java side declares.
 */
final class UapiLayouts {
    private UapiLayouts() {
    }

    /** "NAME VALUE" lines of java-uapi-layout SECTION, as a sorted map. */
    static Map<String, Long> of(String section) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(TestSupport.program("tests/java/java-uapi-layout").toString(), section)
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException("java-uapi-layout " + section + " did not finish");
        }
        assertEquals(0, p.exitValue(), out);
        Map<String, Long> values = new TreeMap<>();
        for (String line : out.split("\n")) {
            if (!line.isBlank()) {
                String[] f = line.split(" ");
                values.put(f[0], Long.parseUnsignedLong(f[1]));
            }
        }
        return values;
    }

    /** Fails unless the Java side's values equal the C headers' for section. */
    static void assertSame(String section, Map<String, Long> java) throws IOException, InterruptedException {
        assertEquals(of(section), new TreeMap<>(java), "uAPI section " + section + ": C headers vs Java");
    }
}
