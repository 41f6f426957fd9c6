"""The numerics identity (comparisons/numerics.py): what it holds, that the kernel variables change it, and how
resume and report judge it (comparisons/comparability.py)."""
from comparisons.comparability import differences
from comparisons.numerics import cpu_facts, describe, identities_line, identities_summary, numerics_identity

XEON = ("processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\nmodel name\t: Intel(R) Xeon(R) "
        "Processor\nflags\t\t: fpu sse4_2 avx avx2 fma avx512f avx512_bf16 amx_tile hypervisor\n\nprocessor\t: 1\n")
EPYC = XEON.replace("GenuineIntel", "AuthenticAMD").replace("Intel(R) Xeon(R) Processor", "AMD EPYC").replace(
    "cpu family\t: 6", "cpu family\t: 26").replace(" amx_tile", "")


def test_cpu_facts_keep_the_vendor_model_and_isa_flags_only():
    facts = cpu_facts(XEON)
    assert facts["vendor"] == "GenuineIntel" and facts["model_name"] == "Intel(R) Xeon(R) Processor"
    assert facts["family"] == "6" and facts["model"] == "143"
    assert facts["isa_flags"] == ["sse4_2", "avx", "avx2", "fma", "avx512f", "avx512_bf16", "amx_tile"]  # no 'hypervisor'


def test_the_kernel_variables_the_cpu_and_threads_change_the_digest():
    base = numerics_identity(2, environ={}, cpuinfo=EPYC)
    assert base == numerics_identity(2, environ={"HOME": "/elsewhere"}, cpuinfo=EPYC)  # unrelated variables do not
    assert len(base["digest"]) == 16 and base["digest"].isalnum() and base["digest"] == base["digest"].lower()
    changed = {numerics_identity(2, environ={"ONEDNN_MAX_CPU_ISA": "AVX2"}, cpuinfo=EPYC)["digest"],
               numerics_identity(2, environ={"MKL_CBWR": "COMPATIBLE"}, cpuinfo=EPYC)["digest"],
               numerics_identity(2, environ={"ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_CBWR": "COMPATIBLE"}, cpuinfo=EPYC)["digest"],
               numerics_identity(2, environ={}, cpuinfo=XEON)["digest"], numerics_identity(1, environ={}, cpuinfo=EPYC)["digest"]}
    assert base["digest"] not in changed and len(changed) == 5
    assert base["versions"]["torch"] and base["kernel_variables"]["MKL_CBWR"] is None
    assert "AMD EPYC" in describe(base) and "AVX-512" in describe(base) and base["digest"] in describe(base)
    assert "MKL_CBWR=COMPATIBLE" in describe(numerics_identity(2, environ={"MKL_CBWR": "COMPATIBLE"}, cpuinfo=EPYC))


def test_resume_reruns_another_identity_and_a_report_keeps_it_and_says_so():
    manifest = {"numerics": numerics_identity(2, environ={}, cpuinfo=EPYC)}
    same = {"numerics_digest": manifest["numerics"]["digest"]}
    other = {"numerics_digest": numerics_identity(2, environ={"ONEDNN_MAX_CPU_ISA": "AVX2"}, cpuinfo=EPYC)["digest"]}
    judged = lambda record, strict: [d for d in differences(record, manifest, strict) if d.startswith("numerics")]
    assert judged(same, True) == [] and judged(other, True) and judged({}, True) == ["numerics not recorded"]
    assert judged(other, False) == [] and judged({}, False) == []  # report: kept (and named in one line), old records not judged
    assert judged(other, True)[0].startswith(f"numerics {other['numerics_digest']}")
    assert identities_line([same, same, {}]) is None  # one identity; a record without the field is not judged
    line = identities_line([same, other, other, {}])
    assert "mix 2 numerics identities" in line and f"2 under {other['numerics_digest']}" in line
    assert identities_summary([same, other, {}]) == {"identities": {same["numerics_digest"]: 1,
                                                                    other["numerics_digest"]: 1, "not recorded": 1},
                                                     "mixed": True}
