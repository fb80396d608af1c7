#!/usr/bin/env python3
"""wb-tune against fake /proc and /sys trees (--root): what it reports, that
--check writes nothing, what --apply changes, and that a host exposing
nothing (a VM) gives SKIP lines, not errors. Needs WB_TUNE=build/wb-tune.
"""

import os
import subprocess
import tempfile
import unittest

WB_TUNE = os.environ.get("WB_TUNE")


def write(root, rel, text):
    path = os.path.join(root, rel.lstrip("/"))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def read(root, rel):
    with open(os.path.join(root, rel.lstrip("/"))) as f:
        return f.read().strip()


def snapshot(root):
    out = {}
    for d, _dirs, files in os.walk(root):
        for name in files:
            p = os.path.join(d, name)
            with open(p) as f:
                out[p] = f.read()
    return out


def untuned_server(root):
    """Two NUMA nodes (cpus 0-1, 2-3); eth9 on node 0 with two queues whose
    IRQs may run anywhere; powersave; a 100 us C-state; THP always;
    /dev/shm mounted without huge= (Debian's default) while another tmpfs
    has it; irqbalance running; cpus 2-3 isolated and tickless."""
    write(root, "/proc/cmdline", "ro quiet isolcpus=managed_irq,domain,2-3 nohz_full=2-3\n")
    write(root, "/sys/devices/system/cpu/online", "0-3\n")
    write(root, "/sys/devices/system/cpu/isolated", "2-3\n")
    write(root, "/sys/devices/system/cpu/nohz_full", "2-3\n")
    write(root, "/proc/1/comm", "systemd\n")
    write(root, "/proc/812/comm", "irqbalance\n")
    write(root, "/sys/class/net/eth9/device/numa_node", "0\n")
    write(root, "/sys/devices/system/node/node0/cpulist", "0-1\n")
    write(root, "/sys/devices/system/node/node1/cpulist", "2-3\n")
    for irq in (40, 41):
        write(root, f"/sys/class/net/eth9/device/msi_irqs/{irq}", "msix\n")
        write(root, f"/proc/irq/{irq}/smp_affinity_list", "0-3\n")
    for cpu in range(4):
        base = f"/sys/devices/system/cpu/cpu{cpu}"
        write(root, f"{base}/cpufreq/scaling_governor", "powersave\n")
        write(root, f"{base}/cpufreq/scaling_available_governors", "performance powersave\n")
        for state, (name, lat) in enumerate([("POLL", 0), ("C1", 2), ("C6", 100)]):
            write(root, f"{base}/cpuidle/state{state}/name", name + "\n")
            write(root, f"{base}/cpuidle/state{state}/latency", f"{lat}\n")
            write(root, f"{base}/cpuidle/state{state}/disable", "0\n")
    write(root, "/sys/kernel/mm/transparent_hugepage/enabled", "[always] madvise never\n")
    write(root, "/sys/kernel/mm/transparent_hugepage/defrag", "always defer [madvise] never\n")
    write(root, "/proc/mounts", MOUNTS.format(shm_opts="rw,nosuid,nodev,inode64"))


MOUNTS = ("sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0\n"
          "proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\n"
          "/dev/vda1 / ext4 rw,relatime,errors=remount-ro 0 0\n"
          "tmpfs /dev/shm tmpfs {shm_opts} 0 0\n"
          "tmpfs /dev/shm/x tmpfs rw,huge=advise 0 0\n"
          "tmpfs /run/lock tmpfs rw,nosuid,nodev,noexec,relatime,size=5120k,huge=within_size 0 0\n")


def run(root, *args):
    res = subprocess.run([WB_TUNE, "--root", root, *args], capture_output=True, text=True)
    lines = {}
    for ln in res.stdout.splitlines():
        parts = ln.split(None, 2)
        if len(parts) == 3 and parts[0] in ("OK", "WARN", "SKIP", "FIXED"):
            lines.setdefault(parts[1], []).append((parts[0], parts[2]))
    return res, lines


@unittest.skipUnless(WB_TUNE, "WB_TUNE not set")
class WbTune(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_check_reports_every_untuned_setting_and_changes_nothing(self):
        untuned_server(self.root)
        before = snapshot(self.root)
        res, lines = run(self.root, "--check", "--iface", "eth9", "--cpus", "2-3")
        self.assertEqual(res.returncode, 1, res.stdout + res.stderr)
        status = {k: v[0][0] for k, v in lines.items()}
        self.assertEqual(status, {
            "isolcpus": "OK", "nohz_full": "OK", "irqbalance": "WARN",
            "irq-affinity": "WARN", "governor": "WARN", "c-states": "WARN",
            "thp": "WARN", "shm-huge": "WARN", "nic-numa": "WARN"})
        self.assertIn("2 of 2 IRQs can run on builder cpus 2-3", lines["irq-affinity"][0][1])
        self.assertIn("C6", lines["c-states"][0][1])
        self.assertIn("node 0 (cpus 0-1)", lines["nic-numa"][0][1])
        self.assertEqual(len(lines["thp"]), 1)  # defrag is already madvise
        self.assertIn("/dev/shm has no huge= option", lines["shm-huge"][0][1])
        self.assertIn("mount -o remount,huge=advise /dev/shm", res.stdout)
        self.assertIn("->", res.stdout)  # recommendations printed
        self.assertEqual(snapshot(self.root), before)

    def test_apply_fixes_run_time_settings_only(self):
        untuned_server(self.root)
        res, lines = run(self.root, "--apply", "--iface", "eth9", "--cpus", "2-3")
        self.assertIn(("FIXED", "eth9: 2 IRQs moved to cpus 0-1"), lines["irq-affinity"])
        self.assertEqual(read(self.root, "/proc/irq/40/smp_affinity_list"), "0-1")
        self.assertEqual(lines["governor"][0][0], "FIXED")
        for cpu in (2, 3):  # only the builder cpus are touched
            self.assertEqual(read(self.root, f"/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_governor"),
                             "performance")
            self.assertEqual(read(self.root, f"/sys/devices/system/cpu/cpu{cpu}/cpuidle/state2/disable"), "1")
            self.assertEqual(read(self.root, f"/sys/devices/system/cpu/cpu{cpu}/cpuidle/state1/disable"), "0")
        self.assertEqual(read(self.root, "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"), "powersave")
        self.assertEqual(read(self.root, "/sys/kernel/mm/transparent_hugepage/enabled"), "madvise")
        # Under --root the remount is played on the fake proc/mounts: only
        # /dev/shm's line changes, its other options kept.
        self.assertEqual(lines["shm-huge"][0][0], "FIXED")
        self.assertEqual(read(self.root, "/proc/mounts"),
                         MOUNTS.format(shm_opts="rw,nosuid,nodev,inode64,huge=advise").strip())
        # Never stops a real irqbalance from a test tree; the NUMA mismatch is only reported.
        self.assertEqual(lines["irqbalance"][0][0], "WARN")
        self.assertEqual(lines["nic-numa"][0][0], "WARN")
        self.assertEqual(res.returncode, 1)

    def test_a_tuned_server_is_all_ok(self):
        untuned_server(self.root)
        os.remove(os.path.join(self.root, "proc/812/comm"))
        write(self.root, "/sys/class/net/eth9/device/numa_node", "1\n")
        for irq in (40, 41):
            write(self.root, f"/proc/irq/{irq}/smp_affinity_list", "1\n")
        res, lines = run(self.root, "--apply", "--iface", "eth9", "--cpus", "2-3")
        self.assertEqual(lines["nic-numa"][0][0], "OK")
        # The builder has every cpu of the NIC's node 1 (2-3): IRQs on cpu 1,
        # off the node but off the builder, are the best left.
        self.assertEqual(lines["irq-affinity"][0][0], "OK")
        res, lines = run(self.root, "--check", "--iface", "eth9", "--cpus", "2-3")
        self.assertEqual(res.returncode, 0, res.stdout)
        self.assertEqual({v[0][0] for v in lines.values()}, {"OK"})

    def test_a_vm_exposing_nothing_gets_skips_not_errors(self):
        write(self.root, "/proc/cmdline", "console=ttyS0\n")
        write(self.root, "/sys/class/net/ens3/address", "52:54:00:12:34:56\n")
        res, lines = run(self.root, "--check", "--iface", "ens3")
        self.assertIn(res.returncode, (0, 1), res.stderr)
        for check in ("irq-affinity", "governor", "c-states", "thp", "shm-huge", "nic-numa"):
            self.assertEqual(lines[check][0][0], "SKIP", check)
        self.assertEqual(lines["shm-huge"][0][1], "/proc/mounts not readable")
        self.assertEqual(res.stderr, "")

    def test_shm_huge_reads_the_last_dev_shm_mount(self):
        untuned_server(self.root)
        for opts in ("rw,nosuid,nodev,huge=advise", "rw,relatime,huge=always",
                     "rw,size=65536k,huge=within_size"):
            write(self.root, "/proc/mounts", MOUNTS.format(shm_opts=opts))
            _res, lines = run(self.root, "--check")
            self.assertEqual(lines["shm-huge"][0][0], "OK", opts)
            self.assertIn("the book's shared memory can use huge pages", lines["shm-huge"][0][1])
        # A later mount on /dev/shm shadows the earlier one: the last line decides.
        write(self.root, "/proc/mounts",
              "tmpfs /dev/shm tmpfs rw,huge=advise 0 0\n"
              "tmpfs /dev/shm tmpfs rw,nosuid,huge=never 0 0\n")
        _res, lines = run(self.root, "--check")
        self.assertEqual(lines["shm-huge"][0], (
            "WARN", "/dev/shm is huge=never: the published book sits on 4 KiB pages, "
            "a TLB miss per symbol publish"))
        _res, lines = run(self.root, "--apply")
        self.assertEqual(lines["shm-huge"][0][0], "FIXED")
        self.assertEqual(read(self.root, "/proc/mounts"),
                         "tmpfs /dev/shm tmpfs rw,huge=advise 0 0\n"
                         "tmpfs /dev/shm tmpfs rw,nosuid,huge=advise 0 0")
        _res, lines = run(self.root, "--check")
        self.assertEqual(lines["shm-huge"][0][0], "OK")

    def test_shm_huge_without_a_dev_shm_mount_is_a_skip(self):
        untuned_server(self.root)
        write(self.root, "/proc/mounts", "/dev/vda1 / ext4 rw,relatime 0 0\n"
              "tmpfs /dev/shm/x tmpfs rw,huge=advise 0 0\n")
        before = snapshot(self.root)
        _res, lines = run(self.root, "--apply")
        self.assertEqual(lines["shm-huge"][0], ("SKIP", "no /dev/shm mount in /proc/mounts"))
        self.assertEqual(read(self.root, "/proc/mounts"), before[os.path.join(self.root, "proc/mounts")].strip())

    def test_virtio_queues_are_found_by_device_name_in_proc_interrupts(self):
        write(self.root, "/proc/cmdline", "console=ttyS0\n")
        write(self.root, "/sys/devices/system/cpu/online", "0-1\n")
        write(self.root, "/sys/devices/pci0000:00/0000:00:03.0/virtio2/vendor", "0x1af4\n")
        os.makedirs(os.path.join(self.root, "sys/class/net/eth0"))
        os.symlink("../../../devices/pci0000:00/0000:00:03.0/virtio2",
                   os.path.join(self.root, "sys/class/net/eth0/device"))
        write(self.root, "/proc/interrupts",
              "           CPU0       CPU1\n"
              " 37:          0          0 PCI-MSIX-0000:00:03.0   0-edge      virtio2-config\n"
              " 38:          0       4800 PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0\n"
              " 39:       3826          0 PCI-MSIX-0000:00:03.0   2-edge      virtio2-output.0\n"
              " 40:          0          0 PCI-MSIX-0000:00:04.0   1-edge      virtio21-input.0\n")
        for irq in (37, 38, 39, 40):
            write(self.root, f"/proc/irq/{irq}/smp_affinity_list", "0-1\n")
        res, lines = run(self.root, "--apply", "--iface", "eth0", "--cpus", "1")
        self.assertEqual(lines["irq-affinity"][0], ("FIXED", "eth0: 2 IRQs moved to cpus 0"))
        self.assertEqual(read(self.root, "/proc/irq/38/smp_affinity_list"), "0")
        self.assertEqual(read(self.root, "/proc/irq/39/smp_affinity_list"), "0")
        self.assertEqual(read(self.root, "/proc/irq/37/smp_affinity_list"), "0-1")  # config vector
        self.assertEqual(read(self.root, "/proc/irq/40/smp_affinity_list"), "0-1")  # another device

    def test_an_unknown_interface_is_a_warning(self):
        untuned_server(self.root)
        _res, lines = run(self.root, "--iface", "nope0")
        self.assertEqual(lines["nic-numa"][0], ("WARN", "no interface nope0"))

    def test_bad_cpu_list_is_a_usage_error(self):
        res = subprocess.run([WB_TUNE, "--cpus", "3-1"], capture_output=True, text=True)
        self.assertEqual(res.returncode, 2)
        self.assertIn("--cpus", res.stderr)


if __name__ == "__main__":
    unittest.main()
