-- SPDX-License-Identifier: Apache-2.0
-- time.conversion: durations between nanoseconds (the unit of every
-- timestamp and duration in the tables) and other units. Conversions to
-- a coarser unit divide as integers (they round toward zero).

-- A duration in nanoseconds, in nanoseconds.
CREATE PERFETTO FUNCTION time_from_ns(
  -- The duration in nanoseconds.
  nanos LONG
)
-- The same duration in nanoseconds.
RETURNS TIMESTAMP
AS
SELECT $nanos;

-- A duration in microseconds, in nanoseconds.
CREATE PERFETTO FUNCTION time_from_us(
  -- The duration in microseconds.
  micros LONG
)
-- The same duration in nanoseconds.
RETURNS LONG
AS
SELECT $micros * 1000;

-- A duration in milliseconds, in nanoseconds.
CREATE PERFETTO FUNCTION time_from_ms(
  -- The duration in milliseconds.
  millis LONG
)
-- The same duration in nanoseconds.
RETURNS TIMESTAMP
AS
SELECT $millis * 1000 * 1000;

-- A duration in seconds, in nanoseconds.
CREATE PERFETTO FUNCTION time_from_s(
  -- The duration in seconds.
  seconds LONG
)
-- The same duration in nanoseconds.
RETURNS TIMESTAMP
AS
SELECT $seconds * 1000 * 1000 * 1000;

-- A duration in minutes, in nanoseconds.
CREATE PERFETTO FUNCTION time_from_min(
  -- The duration in minutes.
  minutes LONG
)
-- The same duration in nanoseconds.
RETURNS TIMESTAMP
AS
SELECT $minutes * 60 * 1000 * 1000 * 1000;

-- A duration in hours, in nanoseconds.
CREATE PERFETTO FUNCTION time_from_hours(
  -- The duration in hours.
  hours LONG
)
-- The same duration in nanoseconds.
RETURNS TIMESTAMP
AS
SELECT $hours * 60 * 60 * 1000 * 1000 * 1000;

-- A duration in days, in nanoseconds.
CREATE PERFETTO FUNCTION time_from_days(
  -- The duration in days.
  days LONG
)
-- The same duration in nanoseconds.
RETURNS LONG
AS
SELECT $days * 24 * 60 * 60 * 1000 * 1000 * 1000;

-- A duration in nanoseconds, in whole nanoseconds.
CREATE PERFETTO FUNCTION time_to_ns(
  -- The duration in nanoseconds.
  nanos TIMESTAMP
)
-- The same duration in nanoseconds.
RETURNS LONG
AS
SELECT $nanos;

-- A duration in nanoseconds, in whole microseconds.
CREATE PERFETTO FUNCTION time_to_us(
  -- The duration in nanoseconds.
  nanos TIMESTAMP
)
-- The same duration in microseconds.
RETURNS LONG
AS
SELECT $nanos / 1000;

-- A duration in nanoseconds, in whole milliseconds.
CREATE PERFETTO FUNCTION time_to_ms(
  -- The duration in nanoseconds.
  nanos TIMESTAMP
)
-- The same duration in milliseconds.
RETURNS LONG
AS
SELECT $nanos / (1000 * 1000);

-- A duration in nanoseconds, in whole seconds.
CREATE PERFETTO FUNCTION time_to_s(
  -- The duration in nanoseconds.
  nanos TIMESTAMP
)
-- The same duration in seconds.
RETURNS LONG
AS
SELECT $nanos / (1000 * 1000 * 1000);

-- A duration in nanoseconds, in whole minutes.
CREATE PERFETTO FUNCTION time_to_min(
  -- The duration in nanoseconds.
  nanos TIMESTAMP
)
-- The same duration in minutes.
RETURNS LONG
AS
SELECT $nanos / (60 * 1000 * 1000 * 1000);

-- A duration in nanoseconds, in whole hours.
CREATE PERFETTO FUNCTION time_to_hours(
  -- The duration in nanoseconds.
  nanos TIMESTAMP
)
-- The same duration in hours.
RETURNS LONG
AS
SELECT $nanos / (60 * 60 * 1000 * 1000 * 1000);

-- A duration in nanoseconds, in whole days.
CREATE PERFETTO FUNCTION time_to_days(
  -- The duration in nanoseconds.
  nanos TIMESTAMP
)
-- The same duration in days.
RETURNS LONG
AS
SELECT $nanos / (24 * 60 * 60 * 1000 * 1000 * 1000);
