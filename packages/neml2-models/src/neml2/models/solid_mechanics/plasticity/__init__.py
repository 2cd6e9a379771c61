"""Rate-independent and viscous plasticity: yield, flow, hardening, Mandel stress."""
