-- Test fixture for the loader and the NOSCRIPT fallback.
-- KEYS[1] any key name; ARGV[1] any value. Reply: "{KEYS[1]}={ARGV[1]}".
return KEYS[1] .. '=' .. ARGV[1]
