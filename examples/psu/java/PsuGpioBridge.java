/*
 * PsuGpioBridge: two parameters of the demo power supply bound to GPIO lines
 * from Java - what pbus-hwd does in C for examples/psu/psu-hw.fdepl, written
 * with io.parambus.hw and io.parambus.ParamTable:
 *
 *   - the rear-panel interlock switch on an input line: every edge is written
 *     to `interlock_open` with the kernel's timestamp of the edge (the line is
 *     requested with the CLOCK_REALTIME event clock, the clock of the table's
 *     timestamps), from a listener of the GPIO event poller;
 *   - the output relay on an output line, driven from `output_enable`: the
 *     line is requested with the parameter's value (it never glitches), then
 *     set again whenever the parameter changes (a Watch on the table).
 *
 *   java --enable-native-access=ALL-UNNAMED -cp parambus.jar:CLASSES PsuGpioBridge \
 *        [--instance psu] [--chip pbus-sim0] [--interlock A1] [--relay A0] \
 *        [--debounce-us 0] [--seconds N]
 *
 * --chip is a chip's label, name (gpiochip2) or path; the lines are named
 * (or given as offsets). It needs the instance open for the provider's writes
 * (interlock_open is read-only for clients): run it as the user of the
 * instance's pbusd. Every action is printed as one line, e.g.
 *   interlock open at 1764037475123456789 (kernel timestamp, line A1)
 *   relay on (output_enable = true, line A0)
 * The kernel-test VM runs it against gpio-sim (tests/kernel/java/io/parambus/
 * hw/vm/ExampleTest.java); docs/java-hw.md explains it.
 */

import io.parambus.ParamTable;
import io.parambus.ParambusException;
import io.parambus.Watch;
import io.parambus.hw.GpioChip;
import io.parambus.hw.GpioEdgeEvent;
import io.parambus.hw.GpioEventPoller;
import io.parambus.hw.GpioLineSettings;
import io.parambus.hw.GpioRequest;
import io.parambus.hw.GpioRequestConfig;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/** The example program (one main thread watching the relay's parameter, one listener thread for edges). */
public final class PsuGpioBridge {
    private PsuGpioBridge() {
    }

    private static final String USAGE = "usage: PsuGpioBridge [--instance psu] [--chip pbus-sim0] [--interlock A1]"
            + " [--relay A0] [--debounce-us 0] [--seconds N]";

    /**
     * Runs the bridge until --seconds pass (default: until killed).
     *
     * @param args the options above
     */
    public static void main(String[] args) {
        String instance = "psu", chipName = "pbus-sim0", interlockLine = "A1", relayLine = "A0";
        long debounceUs = 0, seconds = 0;
        try {
            for (int i = 0; i < args.length; i++) {
                String v = i + 1 < args.length ? args[i + 1] : null;
                switch (args[i]) {
                    case "--instance" -> instance = need(v, args[i]);
                    case "--chip" -> chipName = need(v, args[i]);
                    case "--interlock" -> interlockLine = need(v, args[i]);
                    case "--relay" -> relayLine = need(v, args[i]);
                    case "--debounce-us" -> debounceUs = Long.parseLong(need(v, args[i]));
                    case "--seconds" -> seconds = Long.parseLong(need(v, args[i]));
                    case "-h", "--help" -> {
                        System.out.println(USAGE);
                        return;
                    }
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
                i++;
            }
        } catch (IllegalArgumentException e) {
            System.err.println("PsuGpioBridge: " + e.getMessage() + "\n" + USAGE);
            System.exit(2);
        }
        try {
            run(instance, chipName, interlockLine, relayLine, debounceUs, seconds);
        } catch (ParambusException e) {
            System.err.println("PsuGpioBridge: " + e.getMessage());
            System.exit(1);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String need(String value, String option) {
        if (value == null) {
            throw new IllegalArgumentException(option + " needs a value");
        }
        return value;
    }

    private static GpioChip openChip(String chip) {
        if (chip.startsWith("/")) {
            return GpioChip.open(chip);
        }
        if (chip.matches("gpiochip[0-9]+")) {
            return GpioChip.openByName(chip);
        }
        return GpioChip.openByLabel(chip);
    }

    private static int line(GpioChip chip, String line) {
        if (line.matches("[0-9]+")) {
            return Integer.parseInt(line);
        }
        return chip.findLine(line).orElseThrow(() -> new ParambusException("ENOENT",
                "GPIO line " + line + ": ENOENT: no line of that name on " + chip.path()));
    }

    private static void run(String instance, String chipName, String interlockName, String relayName,
            long debounceUs, long seconds) throws InterruptedException {
        // Table writes come from platform threads: the listener's executor is one.
        ExecutorService listenerThread = Executors.newSingleThreadExecutor(
                r -> Thread.ofPlatform().name("psu-gpio-bridge-edges").daemon().unstarted(r));
        try (ParamTable table = ParamTable.open(instance, ParamTable.Access.PROVIDER);
                GpioChip chip = openChip(chipName)) {
            int interlock = line(chip, interlockName), relay = line(chip, relayName);
            int pInterlock = table.index("interlock_open"), pRelay = table.index("output_enable");
            boolean on = table.getBoolean(pRelay);
            GpioRequestConfig config = GpioRequestConfig.builder()
                    .line(interlock, GpioLineSettings.input().edge(GpioLineSettings.Edge.BOTH)
                            .eventClock(GpioLineSettings.EventClock.REALTIME).debouncePeriodUs(debounceUs).build())
                    .line(relay, GpioLineSettings.output(on).build())
                    .consumer("psu-gpio-bridge").build();
            try (GpioRequest request = chip.request(config);
                    GpioEventPoller poller = GpioEventPoller.builder().executor(listenerThread).start();
                    Watch watch = table.watch(pRelay)) {
                System.out.printf("relay %s (output_enable = %b, line %s, as requested)%n", on ? "on" : "off", on,
                        relayName);
                table.setBoolean(pInterlock, request.getValue(interlock));
                poller.listen(request, interlock, (GpioEdgeEvent e) -> {
                    boolean open = e.type() == GpioEdgeEvent.Type.RISING;
                    table.batch().timestamp(e.timestampNs()).setBoolean(pInterlock, open).commit();
                    System.out.printf("interlock %s at %d (kernel timestamp, line %s)%n", open ? "open" : "closed",
                            e.timestampNs(), interlockName);
                });
                System.out.println("bridging " + instance + " to " + chip.path() + "; ready");
                long end = seconds > 0 ? System.nanoTime() + seconds * 1_000_000_000L : Long.MAX_VALUE;
                while (System.nanoTime() < end) {
                    long left = Math.min(end - System.nanoTime(), 1_000_000_000L);
                    if (left > 0 && watch.await(Duration.ofNanos(left))) {
                        while (watch.next() >= 0) {
                            // drain: only the current value matters
                        }
                        boolean want = table.getBoolean(pRelay);
                        request.setValue(relay, want);
                        System.out.printf("relay %s (output_enable = %b, line %s)%n", want ? "on" : "off", want,
                                relayName);
                    }
                }
            }
        } finally {
            listenerThread.shutdownNow();
        }
    }
}
