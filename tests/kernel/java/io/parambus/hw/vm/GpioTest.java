package io.parambus.hw.vm;

import static io.parambus.hw.vm.VmSuite.check;
import static io.parambus.hw.vm.VmSuite.equal;

import io.parambus.hw.GpioChip;
import io.parambus.hw.GpioChipInfo;
import io.parambus.hw.GpioEdgeEvent;
import io.parambus.hw.GpioEdgeListener;
import io.parambus.hw.GpioEventBuffer;
import io.parambus.hw.GpioEventPoller;
import io.parambus.hw.GpioInfoEvent;
import io.parambus.hw.GpioLineInfo;
import io.parambus.hw.GpioLineLocation;
import io.parambus.hw.GpioLineSettings;
import io.parambus.hw.GpioLineSettings.Bias;
import io.parambus.hw.GpioLineSettings.Direction;
import io.parambus.hw.GpioLineSettings.Drive;
import io.parambus.hw.GpioLineSettings.Edge;
import io.parambus.hw.GpioLineSettings.EventClock;
import io.parambus.hw.GpioRequest;
import io.parambus.hw.GpioRequestConfig;
import io.parambus.hw.HwException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * io.parambus.hw's GPIO against gpio-sim (tests/kernel/ENVIRONMENT.md section 3:
 * pbus-sim0 with 16 lines A0..A15, pbus-sim1 with 8 lines B0..B7), the Java
 * counterpart of suite/test-gpio.c: chips and line info, per-line settings read back,
 * outputs that start at their requested value and are never seen low, bulk get and set,
 * reconfigure, EBUSY, HTE's EOPNOTSUPP, line-info watch, debounce, edge events on 8 and
 * 24 lines with 64 listeners on virtual and platform threads, and a chip taken offline.
 * GpioStressTest has the long runs (10,000 requests, thousands of edges, allocation).
 *
 * <p>Every case leaves the chips as it found them: lines released, pulls down, chips live.
 */
public class GpioTest implements AutoCloseable {
    public static void main(String[] args) {
        VmSuite.main(GpioTest.class, args);
    }

    static final String SIM0 = "pbus-sim0", SIM1 = "pbus-sim1";
    private final List<AutoCloseable> toClose = new ArrayList<>();

    private <T extends AutoCloseable> T closing(T c) {
        toClose.add(c);
        return c;
    }

    @Override
    public void close() {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            try {
                toClose.get(i).close();
            } catch (Exception e) {
                throw new IllegalStateException("closing " + toClose.get(i), e);
            }
        }
        for (String label : new String[] {SIM0, SIM1}) {
            bringBack(label);
            try (GpioSimLines sim = new GpioSimLines(label, label.equals(SIM0) ? 16 : 8)) {
                for (int k = 0; k < (label.equals(SIM0) ? 16 : 8); k++) {
                    sim.pull(k, false);
                }
            }
        }
    }

    /** Makes a gpio-sim chip live again if a case took it offline (writing 1 to a live chip is EPERM). */
    static void bringBack(String label) {
        if (Kenv.read("/sys/kernel/config/gpio-sim/" + label + "/live").equals("0")) {
            Kenv.simLive(label, true);
        }
    }

    /** tracefs, automounted under debugfs (the kernel has CONFIG_EVENT_TRACING and gpiolib's trace events). */
    static final String TRACING = "/sys/kernel/debug/tracing";

    /** The global GPIO number of line 0 of a gpio-sim chip (the gpio_value trace event names lines by it). */
    static int gpioBase(String label) throws Exception {
        try (var dirs = java.nio.file.Files.newDirectoryStream(java.nio.file.Path.of("/sys/class/gpio"),
                "gpiochip*")) {
            for (var d : dirs) {
                if (Kenv.read(d.resolve("label").toString()).equals(label)) {
                    return Integer.parseInt(Kenv.read(d.resolve("base").toString()));
                }
            }
        }
        throw new IllegalStateException("no /sys/class/gpio/gpiochip* labelled " + label);
    }

    static GpioLineSettings in(Edge edge) {
        return GpioLineSettings.input().edge(edge).build();
    }

    static GpioLineSettings out(boolean value) {
        return GpioLineSettings.output(value).build();
    }

    private static HwException hwError(Runnable r, String what) {
        try {
            r.run();
        } catch (HwException e) {
            return e;
        }
        throw new AssertionError(what + ": no HwException");
    }

    // ---- chips and line info ---------------------------------------------

    @VmSuite.Case
    public void chip_open_every_way() {
        String path = Kenv.gpiochip(SIM0);
        List<GpioChipInfo> chips = GpioChip.list();
        equal(2, chips.size(), "chips listed");
        GpioChipInfo sim0 = chips.stream().filter(c -> c.label().equals(SIM0)).findFirst().orElseThrow();
        GpioChipInfo sim1 = chips.stream().filter(c -> c.label().equals(SIM1)).findFirst().orElseThrow();
        equal(path, sim0.path(), "pbus-sim0's path");
        equal(16, sim0.lines(), "pbus-sim0's lines");
        equal(8, sim1.lines(), "pbus-sim1's lines");
        try (GpioChip c = GpioChip.open(path)) {
            equal(sim0, c.info(), "info by path");
            equal(16, c.lineCount(), "lineCount");
            equal("/dev/" + c.name(), path, "name");
        }
        try (GpioChip c = GpioChip.openByName(sim1.name())) {
            equal(SIM1, c.label(), "label by name");
        }
        try (GpioChip c = GpioChip.openByLabel(SIM1)) {
            equal(sim1, c.info(), "info by label");
        }
    }

    @VmSuite.Case
    public void chip_open_errors() {
        HwException e = hwError(() -> GpioChip.open("/dev/gpiochip99"), "missing chip");
        equal("ENOENT", e.errno(), "open /dev/gpiochip99");
        equal("GPIO chip open on /dev/gpiochip99: ENOENT (No such file or directory)", e.getMessage(), "message");
        equal("ENOENT", hwError(() -> GpioChip.openByLabel("no-such-chip"), "label").errno(), "by label");
        e = hwError(() -> GpioChip.open("/dev/null"), "not a chip");
        equal("GPIO chip info on /dev/null: ENOTTY (Inappropriate ioctl for device)", e.getMessage(), "/dev/null");
    }

    @VmSuite.Case
    public void line_info_and_lookup() {
        try (GpioChip chip = GpioChip.openByLabel(SIM0)) {
            GpioLineInfo li = chip.lineInfo(3);
            equal(new GpioLineInfo(3, "A3", "", false, Direction.INPUT, Bias.AS_IS, Drive.PUSH_PULL, false, Edge.NONE,
                    EventClock.MONOTONIC, 0), li, "line 3");
            try {
                chip.lineInfo(16);
                throw new AssertionError("line 16 of 16 accepted");
            } catch (IllegalArgumentException expected) {
                check(expected.getMessage().contains("offset 16 is not one of the chip's 16 lines"), "%s",
                        expected.getMessage());
            }
            equal(11, chip.findLine("A11").orElse(-1), "A11");
            check(chip.findLine("B2").isEmpty(), "B2 is not on pbus-sim0");
        }
        GpioLineLocation b5 = GpioChip.locateLine("B5").orElseThrow();
        equal(new GpioLineLocation(Kenv.gpiochip(SIM1), SIM1, 5), b5, "B5");
        equal(15, GpioChip.locateLine("A15").orElseThrow().offset(), "A15");
        check(GpioChip.locateLine("NOPE").isEmpty(), "NOPE found");
    }

    // ---- requests and values -----------------------------------------------

    /**
     * Pi4J: "an output configured to start high was first driven low". The lines are
     * pulled up before the request (gpio-sim reads 1), so a low glitch would be visible:
     * the kernel's gpio_value trace event records every level gpiolib sets, and each line
     * gets exactly one, its requested level, from the request ioctl itself (a request
     * driving low and a set driving high after would record two); a thread reads
     * gpio-sim's value of the lines requested high in a tight loop during the request; a
     * chip watching line 2 sees it requested as an output in one step (no
     * reconfiguration after); the values right after the request, before any set, are
     * the requested ones.
     */
    @VmSuite.Case
    public void output_requested_high_is_never_low() throws Exception {
        int[] offs = {2, 5, 9, 14};
        try (GpioSimLines sim = new GpioSimLines(SIM0, 16); GpioChip chip = GpioChip.openByLabel(SIM0);
                GpioChip watcher = GpioChip.openByLabel(SIM0)) {
            for (int o : offs) {
                sim.pull(o, true);
                equal(1, sim.value(o), "pulled-up line " + o + " before the request");
            }
            watcher.watchLineInfo(2);
            AtomicBoolean stop = new AtomicBoolean();
            AtomicInteger samples = new AtomicInteger(), lows = new AtomicInteger();
            CountDownLatch sampling = new CountDownLatch(1);
            Thread sampler = Thread.ofPlatform().start(() -> {
                try (GpioSimLines s = new GpioSimLines(SIM0, 16)) {
                    while (!stop.get()) {
                        for (int o : new int[] {2, 9, 14}) {
                            if (s.value(o) == 0) {
                                lows.incrementAndGet();
                            }
                            samples.incrementAndGet();
                        }
                        sampling.countDown();
                    }
                }
            });
            check(sampling.await(10, TimeUnit.SECONDS), "the sampler did not start");
            // The kernel's own record of every level gpiolib sets: the gpio_value trace event.
            Kenv.write(TRACING + "/events/gpio/gpio_value/enable", "1");
            Kenv.write(TRACING + "/trace", ""); // truncating clears it
            GpioRequestConfig config = GpioRequestConfig.builder().line(2, out(true)).line(5, out(false))
                    .line(9, out(true)).line(14, GpioLineSettings.output(false).activeLow(true).build()).build();
            try (GpioRequest req = chip.request(config)) {
                // Right after the request, before any set: the requested levels.
                equal(1, sim.value(2), "line 2 (requested high)");
                equal(0, sim.value(5), "line 5 (requested low)");
                equal(1, sim.value(9), "line 9 (requested high)");
                equal(1, sim.value(14), "line 14 (active-low, logical 0 = high)");
                String trace = Kenv.read(TRACING + "/trace");
                Kenv.write(TRACING + "/events/gpio/gpio_value/enable", "0");
                int base = gpioBase(SIM0);
                int[] raw = {1, 0, 1, 1};
                for (int i = 0; i < 4; i++) {
                    List<String> sets = new ArrayList<>();
                    for (String line : trace.split("\n")) {
                        int at = line.indexOf("gpio_value: " + (base + offs[i]) + " set ");
                        if (at >= 0) {
                            sets.add(line.substring(at + 12));
                        }
                    }
                    equal(List.of((base + offs[i]) + " set " + raw[i]), sets,
                            "levels gpiolib set on line " + offs[i] + " (the request itself, once)");
                }
                equal(0b0101L, req.getValues(), "logical values");
                Thread.sleep(50);
                stop.set(true);
                sampler.join();
                System.out.printf("# %d samples of lines 2, 9, 14 around the request, %d low%n", samples.get(),
                        lows.get());
                check(samples.get() > 10, "only %d samples", samples.get());
                equal(0, lows.get(), "samples of a requested-high line at 0 (of " + samples.get() + ")");
                GpioInfoEvent ev = watcher.readInfoEvent(Duration.ofSeconds(5));
                check(ev != null && ev.type() == GpioInfoEvent.Type.REQUESTED, "watch event: %s", ev);
                equal(Direction.OUTPUT, ev.info().direction(), "line 2 requested as");
                equal(null, watcher.readInfoEvent(Duration.ofMillis(200)), "a second change of line 2");
            } finally {
                stop.set(true);
                sampler.join();
                Kenv.write(TRACING + "/events/gpio/gpio_value/enable", "0");
            }
        }
    }

    @VmSuite.Case
    public void per_line_settings_in_line_info() {
        GpioLineSettings[] s = {
            GpioLineSettings.input().bias(Bias.PULL_UP).edge(Edge.RISING).build(),
            GpioLineSettings.input().bias(Bias.PULL_DOWN).edge(Edge.FALLING).activeLow(true).debouncePeriodUs(3000)
                    .build(),
            GpioLineSettings.input().bias(Bias.DISABLED).edge(Edge.BOTH).eventClock(EventClock.REALTIME).build(),
            GpioLineSettings.output(true).drive(Drive.OPEN_DRAIN).build(),
            GpioLineSettings.output(false).drive(Drive.OPEN_SOURCE).build(),
            GpioLineSettings.output(true).build(),
        };
        GpioRequestConfig.Builder b = GpioRequestConfig.builder().consumer("pbus-java-test");
        for (int i = 0; i < s.length; i++) {
            b.line(i, s[i]);
        }
        try (GpioChip chip = GpioChip.openByLabel(SIM0); GpioRequest req = chip.request(b.build())) {
            for (int i = 0; i < s.length; i++) {
                GpioLineInfo li = chip.lineInfo(i);
                String w = "line " + i + " (" + s[i] + ")";
                check(li.used(), "%s not used", w);
                equal("pbus-java-test", li.consumer(), w + " consumer");
                equal(s[i].direction(), li.direction(), w + " direction");
                equal(s[i].bias(), li.bias(), w + " bias");
                equal(s[i].drive(), li.drive(), w + " drive");
                equal(s[i].edge(), li.edge(), w + " edge");
                equal(s[i].eventClock(), li.eventClock(), w + " clock");
                equal(s[i].activeLow(), li.activeLow(), w + " active-low");
                equal(s[i].debouncePeriodUs(), li.debouncePeriodUs(), w + " debounce");
            }
            equal(s.length, req.settings().size(), "settings kept");
            check(req.getValue(0), "gpio-sim applies the pull-up bias to line 0");
            equal(1, Kenv.simValue(SIM0, 5), "line 5 driven high");
        }
    }

    @VmSuite.Case
    public void bulk_set_and_get() {
        try (GpioChip chip = GpioChip.openByLabel(SIM0); GpioSimLines sim = new GpioSimLines(SIM0, 16)) {
            GpioRequestConfig.Builder b = GpioRequestConfig.builder();
            for (int i = 0; i < 8; i++) {
                b.line(15 - i, out(false)); // index i is offset 15-i
            }
            try (GpioRequest req = chip.request(b.build())) {
                req.setValues(0xff, 0xa5);
                for (int i = 0; i < 8; i++) {
                    equal((0xa5 >> i) & 1, sim.value(15 - i), "line " + (15 - i) + " after 0xa5");
                }
                req.setValues(0x0f, 0x0a); // only indexes 0..3 change
                for (int i = 0; i < 8; i++) {
                    equal((0xaa >> i) & 1, sim.value(15 - i), "line " + (15 - i) + " after 0x0a/0x0f");
                }
                equal(0xa0L, req.getValues(0xf0), "get of indexes 4..7");
                req.setValue(9, true);
                equal(1, sim.value(9), "line 9 set by offset");
                check(req.getValue(9), "line 9 read by offset");
                req.setValue(9, false);
                equal(0, sim.value(9), "line 9 cleared by offset");
            }
            GpioRequestConfig.Builder ins = GpioRequestConfig.builder();
            for (int i = 0; i < 8; i++) {
                ins.line(i, in(Edge.NONE));
                sim.pull(i, ((0x3c >> i) & 1) != 0);
            }
            try (GpioRequest req = chip.request(ins.build())) {
                equal(0x3cL, req.getValues(), "inputs read the pulls");
                HwException e = hwError(() -> req.setValues(1, 1), "setting an input");
                equal("EPERM", e.errno(), "setting an input");
                equal("GPIO set values", e.operation(), "operation");
                equal(chip.path() + " lines 0,1,2,3,4,5,6,7", e.device(), "device");
            }
        }
    }

    @VmSuite.Case
    public void reconfigure_live_request() {
        try (GpioChip chip = GpioChip.openByLabel(SIM0); GpioSimLines sim = new GpioSimLines(SIM0, 16);
                GpioRequest req = chip.request(GpioRequestConfig.builder().line(6, out(true))
                        .line(10, in(Edge.NONE)).line(11, out(false)).build())) {
            equal(1, sim.value(6), "line 6 requested high");
            // All lines: directions swapped, the new output starts high at once.
            req.reconfigure(List.of(GpioLineSettings.input().edge(Edge.BOTH).bias(Bias.PULL_DOWN).build(), out(true),
                    out(false)));
            equal(1, sim.value(10), "line 10 now an output, high");
            equal(Direction.INPUT, chip.lineInfo(6).direction(), "line 6");
            equal(Edge.BOTH, chip.lineInfo(6).edge(), "line 6 edges");
            equal(Direction.OUTPUT, chip.lineInfo(10).direction(), "line 10");
            check(!req.getValue(6), "line 6 reads its pull-down");
            // One line: the other outputs keep the level they have now (11 was set high).
            req.setValue(11, true);
            req.reconfigure(6, out(false));
            equal(Direction.OUTPUT, chip.lineInfo(6).direction(), "line 6 output again");
            equal(0, sim.value(6), "line 6");
            equal(1, sim.value(10), "line 10 kept high");
            equal(1, sim.value(11), "line 11 kept high (not reset to its requested low)");
            equal(out(false), req.settings().get(0), "settings of index 0");
        }
    }

    @VmSuite.Case
    public void busy_line_is_ebusy() {
        try (GpioChip chip = GpioChip.openByLabel(SIM0); GpioChip other = GpioChip.openByLabel(SIM0)) {
            GpioRequest a = closing(chip.request(GpioRequestConfig.builder().line(3, in(Edge.NONE)).build()));
            GpioRequestConfig two = GpioRequestConfig.builder().lines(in(Edge.NONE), 4, 3).build();
            HwException e = hwError(() -> chip.request(two), "line 3 twice");
            equal("GPIO line request on " + chip.path() + ": EBUSY (Device or resource busy)", e.getMessage(),
                    "message");
            equal("EBUSY", hwError(() -> other.request(two), "from another chip object").errno(), "other");
            a.close();
            other.request(two).close();
        }
    }

    @VmSuite.Case
    public void hte_clock_is_eopnotsupp() {
        try (GpioChip chip = GpioChip.openByLabel(SIM1)) {
            GpioRequestConfig hte = GpioRequestConfig.builder()
                    .line(4, GpioLineSettings.input().edge(Edge.BOTH).eventClock(EventClock.HTE).build()).build();
            HwException e = hwError(() -> chip.request(hte), "HTE clock");
            equal("GPIO line request on " + chip.path() + ": EOPNOTSUPP (Operation not supported)", e.getMessage(),
                    "message");
            chip.request(GpioRequestConfig.builder().line(4, in(Edge.BOTH)).build()).close(); // the line is free
        }
    }

    @VmSuite.Case
    public void line_info_watch() {
        try (GpioChip watcher = GpioChip.openByLabel(SIM1); GpioChip user = GpioChip.openByLabel(SIM1)) {
            GpioLineInfo li = watcher.watchLineInfo(7);
            check(!li.used() && li.name().equals("B7"), "watched line: %s", li);
            equal("EBUSY", hwError(() -> watcher.watchLineInfo(7), "watch twice").errno(), "watch twice");
            equal(null, watcher.readInfoEvent(Duration.ZERO), "event before any change");
            GpioRequest req = user.request(GpioRequestConfig.builder().consumer("watched").line(7, out(true)).build());
            GpioInfoEvent e = watcher.readInfoEvent(Duration.ofSeconds(3));
            check(e != null && e.type() == GpioInfoEvent.Type.REQUESTED, "requested: %s", e);
            check(e.info().used() && e.info().consumer().equals("watched"), "requested: %s", e);
            equal(Direction.OUTPUT, e.info().direction(), "direction");
            check(e.timestampNs() > 0, "timestamp %d", e.timestampNs());
            req.reconfigure(List.of(in(Edge.NONE)));
            e = watcher.readInfoEvent(Duration.ofSeconds(3));
            check(e != null && e.type() == GpioInfoEvent.Type.RECONFIGURED, "reconfigured: %s", e);
            equal(Direction.INPUT, e.info().direction(), "direction after reconfigure");
            req.close();
            e = watcher.readInfoEvent(Duration.ofSeconds(3));
            check(e != null && e.type() == GpioInfoEvent.Type.RELEASED, "released: %s", e);
            watcher.unwatchLineInfo(7);
            equal("EBUSY", hwError(() -> watcher.unwatchLineInfo(7), "unwatch twice").errno(), "unwatch twice");
            user.request(GpioRequestConfig.builder().line(7, in(Edge.NONE)).build()).close();
            equal(null, watcher.readInfoEvent(Duration.ofMillis(200)), "event of an unwatched line");
        }
    }

    // ---- events ----------------------------------------------------------------

    /** All 16 lines of a request read in batches: kernel timestamps (monotonic, increasing) and seqnos. */
    @VmSuite.Case
    public void events_in_batches_with_timestamps_and_seqnos() {
        GpioRequestConfig.Builder b = GpioRequestConfig.builder();
        for (int i = 0; i < 16; i++) {
            b.line(i, in(Edge.BOTH));
        }
        try (GpioChip chip = GpioChip.openByLabel(SIM0); GpioSimLines sim = new GpioSimLines(SIM0, 16);
                GpioRequest req = chip.request(b.build()); GpioEventBuffer buf = new GpioEventBuffer(5)) {
            equal(0L, (long) req.readEvents(buf, Duration.ZERO), "events before any edge");
            long before = System.nanoTime(); // CLOCK_MONOTONIC, the events' default clock
            for (int i = 0; i < 16; i++) {
                sim.pull(i, true);
            }
            for (int i = 0; i < 16; i++) {
                sim.pull(i, false);
            }
            long after = System.nanoTime();
            List<GpioEdgeEvent> got = new ArrayList<>();
            while (got.size() < 32) {
                int n = req.readEvents(buf, Duration.ofSeconds(5));
                check(n >= 1 && n <= 5, "read %d events into a buffer of 5", n);
                for (int i = 0; i < n; i++) {
                    got.add(buf.event(i));
                }
            }
            equal(0L, (long) req.readEvents(buf, Duration.ofMillis(50)), "events after the 32");
            int seen = 0;
            for (int i = 0; i < 32; i++) {
                GpioEdgeEvent e = got.get(i);
                equal(i + 1L, e.seqno(), "seqno of event " + i);
                equal(i < 16 ? 1L : 2L, e.lineSeqno(), "line seqno of event " + i);
                equal(i < 16 ? GpioEdgeEvent.Type.RISING : GpioEdgeEvent.Type.FALLING, e.type(), "type of " + i);
                equal(i % 16, e.offset(), "offset of event " + i);
                seen |= 1 << e.offset();
                check(e.timestampNs() >= before && e.timestampNs() <= after, "timestamp %d outside [%d, %d]",
                        e.timestampNs(), before, after);
                check(i == 0 || e.timestampNs() >= got.get(i - 1).timestampNs(), "timestamps go back at %d", i);
            }
            equal(0xffff, seen, "lines with events");
        }
    }

    /**
     * Pi4J: "no events on more than four inputs". 8 inputs (all of pbus-sim1) with one
     * listener each and one for all, each line toggled up and down, on virtual threads and
     * on a platform pool: every listener gets its events, in order, with the kernel's
     * timestamps.
     */
    private void eightInputsWithListeners(Executor executor) throws Exception {
        GpioEventPoller.Builder pb = GpioEventPoller.builder();
        if (executor != null) {
            pb.executor(executor);
        }
        GpioRequestConfig.Builder b = GpioRequestConfig.builder();
        for (int i = 0; i < 8; i++) {
            b.line(i, in(Edge.BOTH));
        }
        try (GpioChip chip = GpioChip.openByLabel(SIM1); GpioSimLines sim = new GpioSimLines(SIM1, 8);
                GpioRequest req = chip.request(b.build()); GpioEventPoller poller = pb.start()) {
            List<ConcurrentLinkedQueue<GpioEdgeEvent>> perLine = new ArrayList<>();
            ConcurrentLinkedQueue<String> threads = new ConcurrentLinkedQueue<>();
            CountDownLatch all = new CountDownLatch(8 * 2 + 16);
            for (int i = 0; i < 8; i++) {
                ConcurrentLinkedQueue<GpioEdgeEvent> q = new ConcurrentLinkedQueue<>();
                perLine.add(q);
                poller.listen(req, i, e -> {
                    q.add(e);
                    threads.add(Thread.currentThread().isVirtual() ? "virtual" : "platform");
                    all.countDown();
                });
            }
            ConcurrentLinkedQueue<GpioEdgeEvent> every = new ConcurrentLinkedQueue<>();
            poller.listen(req, e -> {
                every.add(e);
                all.countDown();
            });
            long before = System.nanoTime();
            for (int i = 0; i < 8; i++) {
                sim.pull(i, true);
            }
            for (int i = 0; i < 8; i++) {
                sim.pull(i, false);
            }
            check(all.await(10, TimeUnit.SECONDS), "events missing: %d of 32", 32 - all.getCount());
            long after = System.nanoTime();
            for (int i = 0; i < 8; i++) {
                List<GpioEdgeEvent> q = List.copyOf(perLine.get(i));
                equal(2, q.size(), "events of line " + i);
                equal(GpioEdgeEvent.Type.RISING, q.get(0).type(), "first event of line " + i);
                equal(GpioEdgeEvent.Type.FALLING, q.get(1).type(), "second event of line " + i);
                equal(1L, q.get(0).lineSeqno(), "line seqno");
                check(q.get(0).timestampNs() >= before && q.get(1).timestampNs() <= after
                        && q.get(0).timestampNs() < q.get(1).timestampNs(), "timestamps of line %d", i);
            }
            long seq = 1;
            for (GpioEdgeEvent e : every) {
                equal(seq++, e.seqno(), "seqno in the all-lines listener");
            }
            equal(0L, poller.lostEvents(), "lost");
            String expected = executor == null ? "virtual" : "platform";
            check(threads.stream().allMatch(expected::equals), "listeners ran on %s", threads);
        }
    }

    @VmSuite.Case
    public void events_on_8_inputs_virtual_threads() throws Exception {
        eightInputsWithListeners(null);
    }

    @VmSuite.Case
    public void events_on_8_inputs_platform_pool() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            eightInputsWithListeners(pool);
        } finally {
            pool.shutdown();
        }
        check(pool.awaitTermination(10, TimeUnit.SECONDS), "pool did not stop");
    }

    /**
     * 64 listeners on all 24 lines there are (pbus-sim0's 16 and pbus-sim1's 8, one
     * request per chip): lines 0..15 of pbus-sim0 have 3 listeners each, the others 2;
     * one rising edge per line reaches every one of them.
     */
    @VmSuite.Case
    public void sixty_four_listeners_on_24_lines() throws Exception {
        GpioRequestConfig.Builder b0 = GpioRequestConfig.builder(), b1 = GpioRequestConfig.builder();
        for (int i = 0; i < 16; i++) {
            b0.line(i, in(Edge.RISING));
        }
        for (int i = 0; i < 8; i++) {
            b1.line(i, in(Edge.RISING));
        }
        try (GpioChip c0 = GpioChip.openByLabel(SIM0); GpioChip c1 = GpioChip.openByLabel(SIM1);
                GpioSimLines s0 = new GpioSimLines(SIM0, 16); GpioSimLines s1 = new GpioSimLines(SIM1, 8);
                GpioRequest r0 = c0.request(b0.build()); GpioRequest r1 = c1.request(b1.build());
                GpioEventPoller poller = GpioEventPoller.start()) {
            List<AtomicReference<GpioEdgeEvent>> got = new ArrayList<>();
            AtomicInteger wrong = new AtomicInteger();
            CountDownLatch done = new CountDownLatch(64);
            for (int k = 0; k < 64; k++) {
                int line = k % 24;
                GpioRequest r = line < 16 ? r0 : r1;
                int offset = line < 16 ? line : line - 16;
                AtomicReference<GpioEdgeEvent> slot = new AtomicReference<>();
                got.add(slot);
                GpioEdgeListener l = e -> {
                    if (e.offset() != offset || !slot.compareAndSet(null, e)) {
                        wrong.incrementAndGet();
                    }
                    done.countDown();
                };
                poller.listen(r, offset, l);
            }
            for (int i = 0; i < 16; i++) {
                s0.pull(i, true);
            }
            for (int i = 0; i < 8; i++) {
                s1.pull(i, true);
            }
            check(done.await(10, TimeUnit.SECONDS), "%d of 64 listeners got no event", done.getCount());
            equal(0, wrong.get(), "events to the wrong listener, or twice");
            equal(24L, poller.eventCount(), "events read");
        }
    }

    /**
     * Pi4J: "debounce that was ignored". On a line with a 200 ms debounce period a
     * glitch shorter than that gives no event while the same glitch on a line without
     * debounce gives two; a lasting change gives one event, 200 ms later.
     */
    @VmSuite.Case
    public void debounce_honoured() {
        try (GpioChip chip = GpioChip.openByLabel(SIM1); GpioSimLines sim = new GpioSimLines(SIM1, 8);
                GpioRequest req = chip.request(GpioRequestConfig.builder()
                        .line(0, GpioLineSettings.input().edge(Edge.BOTH).debounce(Duration.ofMillis(200)).build())
                        .line(1, in(Edge.BOTH)).build());
                GpioEventBuffer buf = new GpioEventBuffer(8)) {
            equal(200_000L, chip.lineInfo(0).debouncePeriodUs(), "line 0's debounce in line info");
            equal(0L, chip.lineInfo(1).debouncePeriodUs(), "line 1's debounce");
            for (int round = 0; round < 3; round++) {
                long t0 = System.nanoTime();
                sim.pull(0, true);
                sim.pull(1, true);
                sim.pull(0, false);
                sim.pull(1, false);
                long glitchMs = (System.nanoTime() - t0) / 1_000_000;
                check(glitchMs < 150, "the VM took %d ms to toggle a line; cannot test a 200 ms debounce", glitchMs);
                List<GpioEdgeEvent> got = new ArrayList<>();
                long deadline = System.nanoTime() + 600_000_000L;
                while (System.nanoTime() < deadline) {
                    int n = req.readEvents(buf, Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
                    for (int i = 0; i < n; i++) {
                        got.add(buf.event(i));
                    }
                }
                equal(2, got.size(), "events of a " + glitchMs + " ms glitch on both lines: " + got);
                check(got.get(0).offset() == 1 && got.get(1).offset() == 1, "glitch events: %s", got);
            }
            long t1 = System.nanoTime();
            sim.pull(0, true);
            int n = req.readEvents(buf, Duration.ofSeconds(2));
            equal(1L, (long) n, "events of a lasting change on the debounced line");
            equal(0, buf.offset(0), "its line");
            equal(GpioEdgeEvent.Type.RISING, buf.type(0), "its type");
            check(buf.timestampNs(0) - t1 >= 150_000_000L, "it came %d ms after the change",
                    (buf.timestampNs(0) - t1) / 1_000_000);
            check(req.getValue(0), "the debounced line reads high");
            equal(0L, (long) req.readEvents(buf, Duration.ofMillis(400)), "more events");
        }
    }

    /**
     * A chip taken offline while requested: every call on its request and chip is an
     * HwException naming the operation, the device and ENODEV; the poller that listens to
     * it and to a request on the other chip goes on delivering the other chip's events.
     * (The removed chip's request has no edge detection: removing a gpio-sim chip with a
     * requested IRQ makes 6.1 warn in remove_proc_entry, see suite/test-gpio.c. Linux 6.1
     * does not wake a removed chip's line descriptors, so the poller learns of the removal
     * only from a call on the request.)
     */
    @VmSuite.Case
    public void chip_offline_is_enodev_and_the_poller_survives() throws Exception {
        try (GpioChip c0 = GpioChip.openByLabel(SIM0); GpioSimLines s0 = new GpioSimLines(SIM0, 16);
                GpioRequest r0 = c0.request(GpioRequestConfig.builder().lines(in(Edge.BOTH), 0, 1).build());
                GpioEventPoller poller = GpioEventPoller.start()) {
            GpioChip c1 = closing(GpioChip.openByLabel(SIM1));
            GpioRequest r1 = closing(c1.request(GpioRequestConfig.builder().line(0, out(true))
                    .line(5, in(Edge.NONE)).build()));
            ConcurrentLinkedQueue<GpioEdgeEvent> events = new ConcurrentLinkedQueue<>();
            CountDownLatch first = new CountDownLatch(2), second = new CountDownLatch(4);
            poller.listen(r0, e -> {
                events.add(e);
                first.countDown();
                second.countDown();
            });
            poller.listen(r1, e -> events.add(e));
            s0.pull(0, true);
            s0.pull(1, true);
            check(first.await(10, TimeUnit.SECONDS), "events before the removal");
            String path1 = c1.path();
            Kenv.simLive(SIM1, false);
            String dev = path1 + " lines 0,5";
            for (Runnable call : new Runnable[] {() -> r1.setValues(1, 0), () -> r1.getValues(),
                    () -> r1.reconfigure(List.of(out(false), in(Edge.NONE)))}) {
                HwException e = hwError(call, "a call on the removed chip's request");
                equal("ENODEV", e.errno(), e.getMessage());
                equal(dev, e.device(), "device in " + e.getMessage());
            }
            equal("GPIO get values on " + dev + ": ENODEV (No such device)", hwError(() -> r1.getValue(5), "get")
                    .getMessage(), "message");
            equal("ENODEV", hwError(c1::info, "chip info").errno(), "chip info");
            equal("ENODEV", hwError(() -> c1.lineInfo(0), "line info").errno(), "line info");
            equal("ENODEV", hwError(() -> c1.request(GpioRequestConfig.builder().line(1, in(Edge.NONE)).build()),
                    "request").errno(), "request");
            equal("ENOENT", hwError(() -> GpioChip.openByLabel(SIM1), "open by label").errno(), "open by label");
            // The poller goes on for pbus-sim0.
            s0.pull(0, false);
            s0.pull(1, false);
            check(second.await(10, TimeUnit.SECONDS), "events after the removal: %s", events);
            check(poller.thread().isAlive(), "the poller thread died");
            r1.close(); // leaves the poller's epoll set
            s0.pull(0, true);
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (events.size() < 5 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            equal(5, events.size(), "events of pbus-sim0 in all");
            check(events.stream().allMatch(e -> e.offset() <= 1), "events: %s", events);
            bringBack(SIM1);
            try (GpioChip back = GpioChip.openByLabel(SIM1)) {
                equal(8, back.lineCount(), "pbus-sim1 back");
            }
        }
    }
}
