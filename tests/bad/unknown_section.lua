-- expect: unknown_section.lua:3: unknown name 'weight'
name "unknown_section"
weight { bits = 4 }
