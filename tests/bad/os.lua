-- expect: os.lua:2: unknown name 'os'
os.execute("true")
