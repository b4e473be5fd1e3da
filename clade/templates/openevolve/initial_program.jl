# The coffee's temperature over time: reads minutes t on standard input, prints degrees C for each.

# EVOLVE-BLOCK-START
# A straight line: hot at the start, a fixed loss per minute.
function temperature(t)
    start = 85.0
    loss_per_minute = 2.0
    return start - loss_per_minute * t
end
# EVOLVE-BLOCK-END

for word in split(read(stdin, String))
    println(temperature(parse(Float64, word)))
end
