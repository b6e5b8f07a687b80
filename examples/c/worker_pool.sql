-- Requests per worker, their mean latency, and how many the flows joined.
select t.name as thread, count(*) as requests, avg(s.dur) / 1000 as mean_us,
       (select count(*) from flow) as flows
from slice s join thread_track tt on s.track_id = tt.id join thread t using(utid)
where s.name = 'handle' group by t.name order by t.name;
