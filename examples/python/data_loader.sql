-- Slices per thread with their mean duration, the flows that joined a
-- loaded batch to its training step, and the deepest the queue got.
select t.name as thread, s.name as slice, count(*) as n, avg(s.dur) / 1000 as mean_us
from slice s join thread_track tt on s.track_id = tt.id join thread t using(utid)
group by t.name, s.name order by t.name, s.name;
select count(*) as flows from flow f join slice a on f.slice_out = a.id join slice b on f.slice_in = b.id
where a.name = 'load_batch' and b.name = 'train_step';
select max(value) as max_queue_depth from counter c join counter_track t on c.track_id = t.id
where t.name = 'queue_depth';
