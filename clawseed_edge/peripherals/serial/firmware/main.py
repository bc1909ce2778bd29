# Runs at boot: serve the clawseed-edge protocol on the REPL UART (Ctrl-C returns to the REPL).
import clawseed_loop

clawseed_loop.run()
