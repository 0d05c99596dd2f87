"""The NPU host: the hardware gates, what they run as, the installed stack they judge and where
it lives (the XRT layout read from the installed packages)."""
