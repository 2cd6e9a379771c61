"""Crystal plasticity: slip geometry, slip rules, strength and hardening per slip system."""
