#!/usr/bin/perl
# seed_rt.pl: deterministic service-desk data for the pristine RT database (RT_SITE_CONFIG set by
# build-rt.sh). Fixed lists + a seeded LCG (rnd): the same rows on every run (RT's own audit rows
# aside, ticket/transaction dates are rewritten to fixed values at the end).
# Creates: 6 queues, 3 staff groups with queue rights, 12 staff + 24 customer users, 3 custom
# fields (Severity, Product, Customer Tier), 300 tickets with statuses/owners/requestors/replies.
use strict;
use warnings;
use lib '/usr/share/request-tracker5/lib';
use RT -init;
use MIME::Entity;

# own PRNG (LCG): RT itself calls Perl's rand(), so srand() alone does not give repeatable rows
my $rng_state = 20260101;
sub rnd { $rng_state = ($rng_state * 1103515245 + 12345) % 2147483648; return $rng_state / 2147483648 }
my $SU = RT->SystemUser;
sub pick { return $_[ int(rnd() * scalar @_) ] }
sub ok { my ($what, $ok, $msg) = @_; die "$what: $msg\n" unless $ok; return $ok }

# --- queues --------------------------------------------------------------------------------------
my %qdesc = (
    'General'           => 'Default queue',
    'IT Helpdesk'       => 'Internal IT requests: accounts, laptops, VPN',
    'Technical Support' => 'Customer product problems',
    'Billing'           => 'Invoices, refunds, payment questions',
    'Sales Inquiries'   => 'Pre-sales questions and quotes',
    'Returns'           => 'Returns and RMA requests',
);
my @qnames = ('General', 'IT Helpdesk', 'Technical Support', 'Billing', 'Sales Inquiries', 'Returns');
my %queue;
for my $n (@qnames) {
    my $q = RT::Queue->new($SU);
    $q->Load($n);
    unless ($q->id) {
        (my $addr = lc $n) =~ s/[^a-z]+/-/g;
        ok("queue $n", $q->Create(Name => $n, Description => $qdesc{$n},
            CorrespondAddress => "$addr\@proctor.example"));
    } else {
        $q->SetDescription($qdesc{$n});
    }
    $queue{$n} = $q;
}

# --- groups and staff ----------------------------------------------------------------------------
my %group;
for my $g (['Support Staff', 'All service agents'], ['Tier 2 Engineers', 'Escalation engineers'],
           ['Billing Team', 'Finance back office']) {
    my $grp = RT::Group->new($SU);
    ok("group $g->[0]", $grp->CreateUserDefinedGroup(Name => $g->[0], Description => $g->[1]));
    $group{ $g->[0] } = $grp;
}
my @staff_rights = qw(SeeQueue ShowTicket CreateTicket ReplyToTicket CommentOnTicket OwnTicket
    ModifyTicket TakeTicket StealTicket ShowTicketComments Watch WatchAsAdminCc ShowOutgoingEmail
    SeeCustomField ModifyCustomField);
for my $qn (@qnames) {
    for my $gn ('Support Staff', 'Tier 2 Engineers') {
        next if $gn eq 'Tier 2 Engineers' && $qn !~ /Technical|IT/;
        ok("right", $group{$gn}->PrincipalObj->GrantRight(Right => $_, Object => $queue{$qn}))
            for @staff_rights;
    }
}
ok("right", $group{'Billing Team'}->PrincipalObj->GrantRight(Right => $_, Object => $queue{'Billing'}))
    for @staff_rights;
# customers (unprivileged) may create tickets and see/reply to their own
my $everyone = RT::Group->new($SU);
$everyone->LoadSystemInternalGroup('Everyone');
for my $qn (@qnames) {
    ok("everyone", $everyone->PrincipalObj->GrantRight(Right => $_, Object => $queue{$qn}))
        for qw(CreateTicket ReplyToTicket);
}
my $reqrole = RT::Group->new($SU);
$reqrole->LoadRoleGroup(Object => RT->System, Name => 'Requestor');
ok("requestor", $reqrole->PrincipalObj->GrantRight(Right => $_, Object => RT->System))
    for qw(ShowTicket ReplyToTicket SeeCustomField);

my @staffdef = (
    ['asmith', 'Alice Smith', 'Support Staff'], ['bjones', 'Ben Jones', 'Support Staff'],
    ['cwu', 'Carol Wu', 'Support Staff'], ['dkumar', 'Deepak Kumar', 'Support Staff'],
    ['egarcia', 'Elena Garcia', 'Support Staff'], ['fmuller', 'Frank Muller', 'Support Staff'],
    ['gnovak', 'Gina Novak', 'Tier 2 Engineers'], ['hsato', 'Haruto Sato', 'Tier 2 Engineers'],
    ['iokoro', 'Ifeoma Okoro', 'Tier 2 Engineers'], ['jlarsen', 'Jonas Larsen', 'Billing Team'],
    ['kbrown', 'Kim Brown', 'Billing Team'], ['lmartin', 'Luc Martin', 'Support Staff'],
);
my (@staff, %staff_by_group);
for my $s (@staffdef) {
    my $u = RT::User->new($SU);
    ok("staff $s->[0]", $u->Create(Name => $s->[0], RealName => $s->[1],
        EmailAddress => "$s->[0]\@proctor.example", Privileged => 1, Password => 'proctor-staff',
        Organization => 'Proctor Support', Lang => 'en'));
    $group{ $s->[2] }->AddMember($u->PrincipalId);
    $group{'Support Staff'}->AddMember($u->PrincipalId) if $s->[2] eq 'Tier 2 Engineers';
    push @staff, $u;
    push @{ $staff_by_group{ $s->[2] } }, $u;
}
my $root = RT::User->new($SU);
$root->Load('root');
$root->SetEmailAddress('root@proctor.example');

# --- custom fields -------------------------------------------------------------------------------
my %cf;
sub mkcf {
    my (%a) = @_;
    my $cf = RT::CustomField->new($SU);
    ok("cf $a{Name}", $cf->Create(Name => $a{Name}, Type => $a{Type}, MaxValues => 1,
        LookupType => $a{LookupType}, Description => $a{Description}));
    my $i = 0;
    $cf->AddValue(Name => $_, SortOrder => ++$i) for @{ $a{Values} || [] };
    $cf->AddToObject($_) for @{ $a{Objects} };
    $cf{ $a{Name} } = $cf;
}
my @products = ('CRM Cloud', 'Analytics Suite', 'Helpdesk Pro', 'Backup Cloud', 'Laptop Pro 14',
    'Rack Server R740', 'Network Switch 48p', 'Office Suite');
mkcf(Name => 'Severity', Type => 'Select', LookupType => 'RT::Queue-RT::Ticket',
    Description => 'Business impact', Values => [qw(Low Medium High Critical)],
    Objects => [ $queue{'Technical Support'}, $queue{'IT Helpdesk'} ]);
mkcf(Name => 'Product', Type => 'Select', LookupType => 'RT::Queue-RT::Ticket',
    Description => 'Product concerned', Values => \@products,
    Objects => [ RT::Queue->new($SU) ]);                       # global: all queues
mkcf(Name => 'Order Number', Type => 'Freeform', LookupType => 'RT::Queue-RT::Ticket',
    Description => 'Sales order reference', Objects => [ $queue{'Billing'}, $queue{'Returns'} ]);
mkcf(Name => 'Customer Tier', Type => 'Select', LookupType => 'RT::User',
    Description => 'Support contract level', Values => [qw(Bronze Silver Gold Platinum)],
    Objects => [ RT::User->new($SU) ]);
for my $gn ('Support Staff', 'Billing Team') {
    ok("cf rights", $group{$gn}->PrincipalObj->GrantRight(Right => $_, Object => RT->System))
        for qw(SeeCustomField ModifyCustomField);
}

# --- customers -----------------------------------------------------------------------------------
my @first = qw(Oliver Amelia Noah Isla Liam Ava Lucas Mia Ethan Zoe Mason Chloe Leo Nora Adam
    Sofia Hugo Lena Omar Priya Victor Yara Tom Ines);
my @last = qw(Fischer Moreau Rossi Novak Silva Andersen Kowalski Brennan Haddad Ivanova Lindqvist
    Costa Dubois Weber Horvat Jensen Murphy Olsen Petrov Quinn Romero Schulz Tanaka Varga);
my @orgs = ('Acme Industries', 'Globex Logistics', 'Initech Systems', 'Umbrella Health',
    'Stark Robotics', 'Wayne Capital', 'Hooli Media', 'Vandelay Foods');
my @customers;
for my $i (0 .. 23) {
    my ($f, $l, $o) = ($first[$i], $last[$i], $orgs[ $i % @orgs ]);
    (my $dom = lc $o) =~ s/\s.*//;
    my $u = RT::User->new($SU);
    ok("customer $f", $u->Create(Name => lc("$f.$l\@$dom.example"), RealName => "$f $l",
        EmailAddress => lc("$f.$l\@$dom.example"), Privileged => 0, Organization => $o,
        Password => 'proctor-customer', WorkPhone => sprintf('+1-555-%04d', int(rnd() * 10000))));
    $u->AddCustomFieldValue(Field => $cf{'Customer Tier'}->id,
        Value => (qw(Bronze Silver Gold Platinum))[ $i % 4 ]);
    push @customers, $u;
}

# --- tickets -------------------------------------------------------------------------------------
my %subjects = (
    'General'           => ['Question about my account', 'Wrong contact address on file',
                            'Request for a call back', 'Feedback on your service', 'Change of company name'],
    'IT Helpdesk'       => ['Laptop will not boot', 'VPN disconnects every hour', 'New hire account setup',
                            'Password reset for email', 'Printer on 3rd floor offline',
                            'Request admin rights for software install', 'Monitor flickering'],
    'Technical Support' => ['Sync fails with error 500', 'Dashboard loads very slowly',
                            'Cannot export report to PDF', 'API returns 401 after token refresh',
                            'Data missing after upgrade', 'Login page shows blank screen',
                            'Backup job stuck at 90%', 'Email notifications not delivered'],
    'Billing'           => ['Invoice amount incorrect', 'Request refund for duplicate charge',
                            'Update credit card details', 'Need copy of last invoice',
                            'VAT number missing on invoice', 'Payment not reflected'],
    'Sales Inquiries'   => ['Pricing for 50 seats', 'Request a product demo', 'Volume discount question',
                            'Upgrade to Enterprise plan', 'Trial extension request'],
    'Returns'           => ['Damaged item on arrival', 'Wrong model delivered', 'Return unused licenses',
                            'RMA for faulty power supply', 'Exchange keyboard layout'],
);
my @qweights = (('General') x 2, ('IT Helpdesk') x 5, ('Technical Support') x 8, ('Billing') x 4,
    ('Sales Inquiries') x 3, ('Returns') x 3);
my @statuses = ((('new') x 5), (('open') x 8), (('stalled') x 2), (('resolved') x 8), (('rejected') x 1));
my @tickets;
for my $n (1 .. 300) {
    my $qn = pick(@qweights);
    my $status = pick(@statuses);
    my $cust = pick(@customers);
    my $pool = $qn eq 'Billing' ? $staff_by_group{'Billing Team'}
             : $qn eq 'Technical Support' && rnd() < 0.4 ? $staff_by_group{'Tier 2 Engineers'}
             : $staff_by_group{'Support Staff'};
    my $owner = ($status eq 'new' && rnd() < 0.7) ? undef : pick(@$pool);
    my $subject = pick(@{ $subjects{$qn} });
    $subject .= sprintf(' (%s #%d)', $cust->Organization, 1000 + $n) if rnd() < 0.5;
    my $body = sprintf("Hello,\n\n%s. This affects %d users at %s.\nPlease advise.\n\nRegards,\n%s\n",
        $subject, 1 + int(rnd() * 40), $cust->Organization, $cust->RealName);
    my %cfv = ('CustomField-' . $cf{Product}->id => pick(@products));
    $cfv{ 'CustomField-' . $cf{Severity}->id } = pick(qw(Low Medium Medium High Critical))
        if $qn =~ /Technical|IT/;
    $cfv{ 'CustomField-' . $cf{'Order Number'}->id } = sprintf('SO-%05d', 20000 + int(rnd() * 9000))
        if $qn =~ /Billing|Returns/;
    my $t = RT::Ticket->new($SU);
    my ($id, undef, $msg) = $t->Create(
        Queue => $queue{$qn}->id, Subject => $subject, Requestor => [ $cust->EmailAddress ],
        ($owner ? (Owner => $owner->id) : ()), Status => ($status eq 'new' ? 'new' : 'open'),
        Priority => pick(0, 10, 20, 30, 50, 70, 90),
        MIMEObj => MIME::Entity->build(Type => 'text/plain', Charset => 'UTF-8', Data => [$body]),
        %cfv);
    die "ticket $n: $msg\n" unless $id;
    if ($owner && $status ne 'new') {
        my $cu = RT::CurrentUser->new; $cu->Load($owner->id);
        my $tt = RT::Ticket->new($cu); $tt->Load($id);
        $tt->Correspond(Content => "Hi " . $cust->RealName . ",\n\nthanks, we are looking into it.\n\n"
            . $owner->RealName . "\n");
        $tt->Comment(Content => "Internal note: checked logs, " . pick('reproduced', 'not reproduced',
            'waiting for vendor', 'known issue KB-' . (int(rnd() * 900) + 100)) . ".\n") if rnd() < 0.5;
        $tt->SetStatus($status) if $status ne 'open';
    } elsif ($status ne 'new' && $status ne 'open') {
        $t->SetStatus($status);
    }
    push @tickets, $id;
}

# --- fixed dates: tickets created over 2025-07-01 .. 2026-01-14, transactions an hour apart -------
my $dbh = $RT::Handle->dbh;
for my $id (@tickets) {
    my $day = int(rnd() * 198);
    my $base = sprintf("datetime('2025-07-01', '+%d days', '+%d minutes')", $day, 480 + int(rnd() * 600));
    $dbh->do("UPDATE Tickets SET Created = datetime($base), LastUpdated = datetime($base, '+3 hours'),"
        . " Due = datetime($base, '+5 days'),"
        . " Started = CASE WHEN Status IN ('new') THEN '1970-01-01 00:00:00' ELSE datetime($base, '+1 hours') END,"
        . " Told = CASE WHEN Status IN ('new') THEN Told ELSE datetime($base, '+1 hours') END,"
        . " Resolved = CASE WHEN Status IN ('resolved','rejected') THEN datetime($base, '+3 hours') ELSE '1970-01-01 00:00:00' END"
        . " WHERE id = $id");
    $dbh->do("UPDATE Transactions SET Created = datetime($base, '+' || (id - (SELECT min(id) FROM"
        . " Transactions WHERE ObjectType='RT::Ticket' AND ObjectId=$id)) || ' minutes')"
        . " WHERE ObjectType = 'RT::Ticket' AND ObjectId = $id");
}
printf "seeded: %d queues, %d staff, %d customers, %d tickets\n", scalar @qnames, scalar @staff,
    scalar @customers, scalar @tickets;
